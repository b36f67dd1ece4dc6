"""collect/record/postprocess outputs beyond the defaults, on a real run of
the demo workload: -format pprof (read back by Debian's `go tool pprof`),
-format perfview (perfcollect's NAME.trace.zip), the flame graph flags,
-threads, and postprocess's filters -pid, -tid, -comm, -from/-to, -no-idle."""

import collections
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import unittest
import zipfile

import profcpu_testing as t

def go_tool_pprof(args, home):
    go = shutil.which("go")
    if go is None:
        raise AssertionError("go is required to read the pprof export: apt-get install golang-go "
                             "(scripts/setup.sh installs it)")
    env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "gocache"), GOFLAGS="",
               GOPATH=os.path.join(home, "gopath"), PPROF_TMPDIR=home)
    result = subprocess.run([go, "tool", "pprof", *args], capture_output=True, text=True,
                            env=env, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"go tool pprof {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


def sample_times(perf_script):
    """The time field of every sample header in perf script text."""
    times = []
    with open(perf_script, encoding="utf-8") as f:
        for line in f:
            match = re.search(r" (\d+\.\d{6}):", line) if line[:1] not in "#\t\n" else None
            if match:
                times.append(float(match.group(1)))
    return times


class ExportsTest(unittest.TestCase):
    """One recorded run of demo_workload, exported and filtered several ways."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        result = t.run_profcpu(
            ["record", "-freq", "499", "-out", cls.tmp.path, "-format", "pprof,perfview",
             "-colors", "dotnet", "-title", "Demo", "--", t.fixture("demo_workload"), "3"],
            timeout=180)
        cls.run_dir = result.stdout.strip().splitlines()[-1]
        cls.name = os.path.basename(cls.run_dir.rstrip("/"))
        cls.folded = t.read_folded(os.path.join(cls.run_dir, "folded_stacks.out"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def copy_run(self):
        """A fresh folder holding only prof.tar.gz, as on a laptop."""
        copy = os.path.join(self.tmp.path, f"copy{len(os.listdir(self.tmp.path))}")
        os.mkdir(copy)
        shutil.copy(os.path.join(self.run_dir, "prof.tar.gz"), copy)
        return copy

    def test_exports_written_and_archived(self):
        for name in ["profile.pb.gz", f"{self.name}.trace.zip"]:
            self.assertGreater(os.path.getsize(os.path.join(self.run_dir, name)), 100, name)
        with tarfile.open(os.path.join(self.run_dir, "prof.tar.gz")) as archive:
            names = set(archive.getnames())
        self.assertIn("profile.pb.gz", names)
        self.assertIn(f"{self.name}.trace.zip", names)
        metadata = t.read_metadata(self.run_dir)
        self.assertIn("profile.pb.gz", json.dumps(metadata))

    def test_go_tool_pprof_reads_the_export(self):
        home = tempfile.mkdtemp(prefix="profcpu-go-")
        try:
            top = go_tool_pprof(["-top", "-symbolize=none",
                                 os.path.join(self.run_dir, "profile.pb.gz")], home)
        finally:
            shutil.rmtree(home, ignore_errors=True)
        # The main binary comes first, with its build-id; the demo's call tree
        # is there with about the CPU time the samples say (2 busy threads).
        self.assertRegex(top, r"File: demo_workload")
        self.assertRegex(top, r"Build ID: [0-9a-f]{40}")
        self.assertIn("Type: cpu", top)
        for function in ["handle_request", "compute_checksum", "compress_payload",
                         "parse_request", "mix_block", "worker_thread"]:
            self.assertIn(function, top)
        total = re.search(r"Total samples = ([\d.]+)(m?s)", top)
        self.assertIsNotNone(total, top)
        seconds = float(total.group(1)) / (1000 if total.group(2) == "ms" else 1)
        folded_samples = sum(self.folded.values())
        self.assertAlmostEqual(seconds, folded_samples / 499, delta=0.3 * folded_samples / 499)
        handle = re.search(r"([\d.]+)%\s+handle_request", top)  # its cum%
        self.assertIsNotNone(handle, top)
        self.assertGreater(float(handle.group(1)), 80)

    def test_perfview_zip_holds_perf_script_text(self):
        with zipfile.ZipFile(os.path.join(self.run_dir, f"{self.name}.trace.zip")) as z:
            self.assertEqual(z.namelist(), [f"{self.name}.trace/perf.data.txt"])
            text = z.read(z.namelist()[0]).decode()
        # PerfView's parser: "comm pid/tid [cpu] time: period event:" headers;
        # perf_script.out's samples, and the ones closing their time
        # (test_perfview.py reads it with PerfView's own reader).
        header = re.compile(r"^\S.*?\s+\d+/\d+\s+\[\d+\]\s+\d+\.\d{6}:\s+\d+\s+\S+:\s*$")
        headers = [line for line in text.splitlines() if header.match(line)]
        self.assertEqual(len(sample_times(os.path.join(self.run_dir, "perf_script.out"))),
                         len([h for h in headers if not h.startswith("unprofiled ")]))
        self.assertGreater(len(headers), 100)
        self.assertTrue(any(line.startswith("demo-worker-1 ") for line in headers))

    def test_profcpu_fold_reads_perf_script_out(self):
        """`profcpu fold` on the run's perf_script.out gives the stacks of
        folded_stacks.out; its counts are the periods (stackcollapse-perf.pl
        sums them), one cpu-clock period per sample."""
        result = subprocess.run([t.PROFCPU, "fold", os.path.join(self.run_dir, "perf_script.out")],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        folded = {}
        for line in result.stdout.splitlines():
            stack, _, count = line.rpartition(" ")
            folded[tuple(stack.split(";"))] = int(count)
        self.assertEqual(set(folded), set(self.folded))
        self.assertEqual({folded[stack] / samples for stack, samples in self.folded.items()},
                         {1e9 // 499})

    def test_graph_flags_apply(self):
        with open(os.path.join(self.run_dir, "flamegraph.svg"), encoding="utf-8") as f:
            svg = f.read()
        self.assertIn(">Demo</text>", svg)
        # The dotnet palette: native C frames red, kernel frames orange (the
        # graph is folded with _[k] marks, which labels do not show).
        fills = dict(re.findall(r"<g><title>([^ <]+) \([^<]*</title><rect [^>]*fill=\"([^\"]+)\"",
                                svg))
        self.assertIn("handle_request", fills)
        r, g, b = map(int, re.match(r"rgb\((\d+),(\d+),(\d+)\)", fills["handle_request"]).groups())
        self.assertGreater(r, 190)
        self.assertLess(b, 140)
        self.assertNotIn("_[k]", svg)
        # folded_stacks.out stays as stackcollapse-perf.pl writes it: no marks.
        self.assertFalse(any("_[k]" in frame for stack in self.folded for frame in stack))

    def test_postprocess_filters(self):
        copy = self.copy_run()
        result = t.run_profcpu(["postprocess", "-dir", copy, "-comm", "demo-logger", "-threads"])
        folded = t.read_folded(os.path.join(copy, "folded_stacks.out"))
        self.assertGreater(len(folded), 0)
        # metadata.json and the closing line count what the outputs hold.
        kept, recorded = sum(folded.values()), t.read_metadata(self.run_dir)["samples"]["total"]
        self.assertLess(kept, recorded)
        self.assertEqual(t.read_metadata(copy)["samples"]["total"], kept)
        self.assertEqual(t.read_metadata(copy)["samples"]["recorded"], recorded)
        self.assertIn(f"{kept} of {recorded} samples kept by the filters", result.stderr)
        for stack in folded:
            self.assertRegex(stack[0], r"^demo-logger-\d+/\d+$")
            self.assertNotIn("handle_request", stack)
        # (write_log_lines itself may be missing: a frame-pointer walk from
        # inside libc's write, which keeps no frame, skips its caller.)
        self.assertTrue(any("logger_thread" in stack for stack in folded))
        with open(os.path.join(copy, "perf_script.out"), encoding="utf-8") as f:
            comms = {line.split()[0] for line in f if line and line[0] not in "#\t\n"}
        self.assertEqual(comms, {"demo-logger"})

        # -tid: one worker's samples only.
        tids = {int(stack[0].rsplit("/", 1)[1]) for stack in self.threads_folded()
                if stack[0].startswith("demo-worker-1")}
        self.assertEqual(len(tids), 1)
        tid = tids.pop()
        copy = self.copy_run()
        t.run_profcpu(["postprocess", "-dir", copy, "-tid", str(tid), "-threads"])
        folded = t.read_folded(os.path.join(copy, "folded_stacks.out"))
        self.assertEqual({int(stack[0].rsplit("/", 1)[1]) for stack in folded}, {tid})
        # The thread names itself once running: a sample taken before that
        # (more likely on a loaded or ASan-slowed machine) has the process's
        # name, and is still this thread's.
        self.assertIn("demo-worker-1", {stack[0].rsplit("-", 1)[0] for stack in folded})
        self.assertLessEqual({stack[0].rsplit("-", 1)[0] for stack in folded},
                             {"demo-worker-1", "demo_workload"})

        # -from/-to: consecutive windows split the samples exactly, and each
        # keeps only samples within one second of each other.
        total = sum(self.folded.values())
        kept = []
        for window in (["-to", "1"], ["-from", "1", "-to", "2"], ["-from", "2", "-no-idle"]):
            copy = self.copy_run()
            t.run_profcpu(["postprocess", "-dir", copy, *window])
            kept.append(sum(t.read_folded(os.path.join(copy, "folded_stacks.out")).values()))
            times = sample_times(os.path.join(copy, "perf_script.out"))
            if "-to" in window and times:
                self.assertLess(max(times) - min(times), 1.0, window)
        self.assertEqual(sum(kept), total, kept)
        self.assertGreater(kept[1], 0, kept)

        # -pid of the recorded process: all of its samples kept (under ASan,
        # LeakSanitizer's child at exit is another process, left out).
        samples_of = collections.Counter()
        worker_pid = None
        with open(os.path.join(self.run_dir, "perf_script.out"), encoding="utf-8") as f:
            for line in f:
                if line and line[0] not in "#\t\n":
                    pid = line.split()[1].split("/")[0]
                    samples_of[pid] += 1
                    if line.startswith("demo-worker-1 "):
                        worker_pid = pid
        self.assertIsNotNone(worker_pid)
        copy = self.copy_run()
        t.run_profcpu(["postprocess", "-dir", copy, "-pid", worker_pid])
        folded = t.read_folded(os.path.join(copy, "folded_stacks.out"))
        self.assertEqual(sum(folded.values()), samples_of[worker_pid])
        self.assertGreater(samples_of[worker_pid], 0.9 * sum(samples_of.values()))
        for stack, count in folded.items():
            self.assertLessEqual(count, self.folded[stack], stack)

        # -pid of another process: nothing left, said so.
        copy = self.copy_run()
        result = t.run_profcpu(["postprocess", "-dir", copy, "-pid", "1"])
        self.assertEqual(os.path.getsize(os.path.join(copy, "folded_stacks.out")), 0)
        with open(os.path.join(copy, "profcpu.log"), encoding="utf-8") as f:
            self.assertIn("the filters kept no sample", f.read())
        self.assertEqual(result.returncode, 0)

    def threads_folded(self):
        copy = self.copy_run()
        t.run_profcpu(["postprocess", "-dir", copy, "-threads"])
        return t.read_folded(os.path.join(copy, "folded_stacks.out"))

    def test_bad_output_flags_fail_before_sampling(self):
        for args, message in [(["-format", "speedscope"], "speedscope opens perf_script.out"),
                              (["-colors", "rainbow"], "unknown palette"),
                              (["-minwidth", "x%"], "-minwidth"),
                              (["-width", "5"], "width")]:
            result = t.run_profcpu(["record", "-out", self.tmp.path, *args, "--", "true"],
                                   check=False)
            self.assertEqual(result.returncode, 2, args)
            self.assertIn(message, result.stderr)
        result = t.run_profcpu(["postprocess", "-dir", self.run_dir, "-from", "5", "-to", "1"],
                               check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("must be after -from", result.stderr)


if __name__ == "__main__":
    unittest.main()
