"""The profcpu command as a user meets it: bad input, help, record, and the
ways collection ends (duration, signals, the target exiting)."""

import os
import shutil
import signal
import subprocess
import time
import unittest

import profcpu_testing as t


class BadInputTest(unittest.TestCase):
    def setUp(self):
        self.tmp = t.TempDir()

    def tearDown(self):
        self.tmp.cleanup()

    def test_dead_pid(self):
        proc = subprocess.Popen(["true"])
        proc.wait()
        result = t.run_profcpu(["collect", "-pid", str(proc.pid), "-duration", "1",
                                "-out", self.tmp.path], check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"no process with pid {proc.pid}", result.stderr)
        self.assertEqual(os.listdir(self.tmp.path), [], "no run folder for a failed start")

    def test_non_numeric_pid(self):
        result = t.run_profcpu(["collect", "-pid", "abc", "-out", self.tmp.path], check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("-pid must be an integer", result.stderr)
        self.assertIn("'abc'", result.stderr)

    def test_missing_pid(self):
        result = t.run_profcpu(["collect", "-duration", "1"], check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("collect needs -pid PID", result.stderr)

    def test_output_dir_is_a_file(self):
        path = os.path.join(self.tmp.path, "a-file")
        open(path, "w").close()
        result = t.run_profcpu(["collect", "-pid", str(os.getpid()), "-duration", "1",
                                "-out", os.path.join(path, "sub")], check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("cannot create directory", result.stderr)
        self.assertIn("Not a directory", result.stderr)

    def test_output_dir_on_read_only_filesystem(self):
        mount_point = os.path.join(self.tmp.path, "ro")
        os.mkdir(mount_point)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs",
                                  mount_point], capture_output=True, text=True)
        self.assertEqual(mounted.returncode, 0,
                         f"tests run as root and need mount: {mounted.stderr}")
        try:
            result = t.run_profcpu(["collect", "-pid", str(os.getpid()), "-duration", "1",
                                    "-out", mount_point], check=False)
            self.assertEqual(result.returncode, 1)
            self.assertIn("Read-only file system", result.stderr)
        finally:
            subprocess.run(["umount", mount_point])

    def test_unknown_event_and_bad_frequency(self):
        result = t.run_profcpu(["collect", "-pid", "1", "-event", "nonsense"], check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("unknown event 'nonsense'", result.stderr)
        self.assertIn("cpu-clock", result.stderr)
        result = t.run_profcpu(["collect", "-pid", "1", "-freq", "0"], check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("-freq", result.stderr)

    def test_unknown_flag_and_command(self):
        result = t.run_profcpu(["collect", "-pdi", "1"], check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("unknown flag '-pdi'", result.stderr)
        # The error and a pointer to --help, not 40 lines of usage above it.
        self.assertEqual(result.stderr.splitlines(),
                         ["profcpu collect: unknown flag '-pdi'",
                          "(profcpu collect --help lists its flags)"])
        for args in (["fold", "--bogus"], ["postprocess"], ["record"], ["diff", "x"],
                     ["ps", "extra"], ["perfmap", "enable"]):
            result = t.run_profcpu(args, check=False)
            self.assertEqual(result.returncode, 2, args)
            self.assertEqual(len(result.stderr.splitlines()), 2, (args, result.stderr))
            self.assertIn(f"profcpu {args[0]} --help", result.stderr)
        result = t.run_profcpu(["colect"], check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("unknown command 'colect'", result.stderr)
        self.assertEqual(len(result.stderr.splitlines()), 1)

    def test_postprocess_of_an_empty_folder(self):
        result = t.run_profcpu(["postprocess", "-dir", self.tmp.path], check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("neither recording.zst nor prof.tar.gz", result.stderr)

    def test_postprocess_of_a_corrupt_archive(self):
        with open(os.path.join(self.tmp.path, "prof.tar.gz"), "wb") as f:
            f.write(b"\x1f\x8b" + os.urandom(2000))
        result = t.run_profcpu(["postprocess", "-dir", self.tmp.path], check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("prof.tar.gz", result.stderr)


class PrivilegeTest(unittest.TestCase):
    """profcpu run with fewer capabilities than root has, as users will."""

    def setUp(self):
        self.tmp = t.TempDir()
        self.assertIsNotNone(shutil.which("capsh"), "capsh is required (libcap2-bin)")

    def tearDown(self):
        self.tmp.cleanup()

    def _profcpu_without(self, caps, pid):
        command = " ".join([t.PROFCPU, "collect", "-pid", str(pid), "-duration", "2",
                            "-out", self.tmp.path])
        return subprocess.run(["capsh", f"--drop={caps}", "--", "-c", command],
                              capture_output=True, text=True, timeout=60)

    def test_without_perfmon_falls_back_to_user_frames_and_says_why(self):
        target = t.start([t.fixture("cpu_shares")])
        try:
            result = self._profcpu_without("cap_perfmon,cap_sys_admin", target.pid)
        finally:
            t.stop(target)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("kernel frames omitted", result.stderr)
        self.assertIn("CAP_PERFMON", result.stderr)
        self.assertIn("perf_event_paranoid", result.stderr)
        run_dir = result.stdout.strip()
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertGreater(t.samples_with(folded, lambda f: f == "burn_fifty_percent"), 20)
        samples = t.parse_like_flamescope(os.path.join(run_dir, "perf_script.out"))
        self.assertFalse(any(module == "[kernel.kallsyms]"
                             for _, _, frames in samples for _, module in frames))
        self.assertTrue(any("kernel frames omitted" in w
                            for w in t.read_metadata(run_dir)["warnings"]))

    def test_another_users_process_without_sys_ptrace_is_refused_by_name(self):
        target = t.start(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          t.fixture("cpu_shares"), "10"])
        try:
            time.sleep(0.2)
            result = self._profcpu_without("cap_perfmon,cap_sys_admin,cap_sys_ptrace",
                                           target.pid)
        finally:
            t.stop(target)
        self.assertEqual(result.returncode, 1)
        self.assertIn("belongs to another user", result.stderr)
        self.assertIn("CAP_SYS_PTRACE", result.stderr)
        self.assertIn("CAP_PERFMON", result.stderr)
        self.assertEqual(os.listdir(self.tmp.path), [], "no run folder when nothing was sampled")


class HelpTest(unittest.TestCase):
    def test_every_command_documents_its_flags(self):
        expected = {
            "collect": ["-pid PID", "-duration SEC", "-freq HZ", "-out DIR", "-event NAME",
                        "-mmap-pages N", "(default 30)", "(default 99)", "(default profilings)"],
            "record": ["-freq HZ", "-out DIR", "COMMAND"],
            "postprocess": ["-dir DIR", "prof.tar.gz"],
        }
        for command, needles in expected.items():
            for spelling in ["--help", "-help", "-h"]:
                result = t.run_profcpu([command, spelling])
                for needle in needles:
                    self.assertIn(needle, result.stdout, f"{command} {spelling}")
        result = t.run_profcpu(["--help"])
        for command in ["collect", "record", "postprocess"]:
            self.assertIn(command, result.stdout)

    def test_demo_sends_the_user_to_the_profile_page_first(self):
        """The demo's closing words name the page that holds everything
        (heatmap, flame graph, table) before the single-purpose files."""
        demo = os.path.join(os.path.dirname(t.FIXTURE_SOURCES), "..", "scripts", "demo.sh")
        with open(demo, encoding="utf-8") as f:
            closing = [line for line in f if line.startswith('echo "Open ')]
        self.assertTrue(closing, "demo.sh no longer tells the user what to open")
        self.assertIn("profile.html", closing[0])


class RecordTest(unittest.TestCase):
    def test_record_runs_the_command_to_its_end(self):
        tmp = t.TempDir()
        try:
            start = time.monotonic()
            result = t.run_profcpu(["record", "-freq", "199", "-out", tmp.path, "--",
                                    t.fixture("cpu_shares"), "2"])
            self.assertLess(time.monotonic() - start, 20)
            run_dir = result.stdout.strip()
            folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
            self.assertGreater(t.samples_with(folded, lambda f: f == "burn_fifty_percent"), 50)
            meta = t.read_metadata(run_dir)
            self.assertEqual(meta["collection"]["stop_reason"], "target exited")
            self.assertIn("command: ", meta["target"])
            # The started process is the command, not profcpu's own command line
            # (read from /proc before the command's exec).
            self.assertEqual(meta["processes"][0]["command_line"],
                             f"{t.fixture('cpu_shares')} 2")
        finally:
            tmp.cleanup()

    def test_record_of_a_missing_program(self):
        tmp = t.TempDir()
        try:
            out = os.path.join(tmp.path, "profilings")
            result = t.run_profcpu(["record", "-out", out, "--", "/no/such/program"],
                                   check=False)
            self.assertEqual(result.returncode, 127, "the shell's status for a missing command")
            self.assertIn("'/no/such/program' not found", result.stderr)
            self.assertEqual(os.listdir(tmp.path), [], "no empty profilings/ left behind")
            not_executable = os.path.join(tmp.path, "script.sh")
            with open(not_executable, "w") as f:
                f.write("#!/bin/sh\n")
            result = t.run_profcpu(["record", "-out", out, "--", not_executable], check=False)
            self.assertEqual(result.returncode, 126)
            self.assertIn("not executable", result.stderr)
            self.assertFalse(os.path.exists(out))
        finally:
            tmp.cleanup()

    def test_record_exits_with_the_commands_status(self):
        tmp = t.TempDir()
        try:
            result = t.run_profcpu(["record", "-out", tmp.path, "--", "sh", "-c",
                                    "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3"],
                                   check=False)
            self.assertEqual(result.returncode, 3, result.stderr)
            self.assertIn("the command exited with status 3", result.stderr)
            run_dir = result.stdout.strip()
            self.assertTrue(os.path.isfile(os.path.join(run_dir, "prof.tar.gz")),
                            "the outputs are written all the same")
            killed = t.run_profcpu(["record", "-out", tmp.path, "--", "sh", "-c", "kill -9 $$"],
                                   check=False)
            self.assertEqual(killed.returncode, 128 + 9)
        finally:
            tmp.cleanup()


class StoppingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = t.TempDir()

    def tearDown(self):
        self.tmp.cleanup()

    def _collect_and_signal(self, signal_number):
        target = t.start([t.fixture("cpu_shares")])
        try:
            profiler = subprocess.Popen(
                [t.PROFCPU, "collect", "-pid", str(target.pid), "-duration", "60", "-out",
                 self.tmp.path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(2.0)
            profiler.send_signal(signal_number)
            out, err = profiler.communicate(timeout=60)
            self.assertEqual(profiler.returncode, 0, err)
            run_dir = out.strip()
            meta = t.read_metadata(run_dir)
            self.assertEqual(meta["collection"]["stop_reason"], "signal")
            self.assertLess(meta["collection"]["duration_seconds"], 10)
            # About 2 s at 99 Hz, minus start-up, on a machine that may be
            # busy: what matters is that the samples taken were kept.
            self.assertGreater(meta["samples"]["total"], 10)
            self.assertTrue(os.path.isfile(os.path.join(run_dir, "prof.tar.gz")))
            self.assertIsNone(target.poll(), "the target must keep running")
        finally:
            t.stop(target)

    def test_sigint_stops_collection_and_writes_outputs(self):
        self._collect_and_signal(signal.SIGINT)

    def test_sigterm_stops_collection_and_writes_outputs(self):
        self._collect_and_signal(signal.SIGTERM)

    def test_target_exit_ends_collection(self):
        target = t.start([t.fixture("cpu_shares"), "1.5"])
        try:
            start = time.monotonic()
            run_dir = t.collect(target.pid, self.tmp.path, duration=30)
            self.assertLess(time.monotonic() - start, 15)
            meta = t.read_metadata(run_dir)
            self.assertEqual(meta["collection"]["stop_reason"], "target exited")
        finally:
            t.stop(target)


if __name__ == "__main__":
    unittest.main()
