"""Faults during collection, each with the real binary and real processes:
the target exits or execs mid-run, a target churns through 1,000 threads a
second, profcpu gets SIGINT, SIGTERM or SIGKILL, the output disk fills up,
and the ring buffers overflow. profcpu must keep working, lose nothing
silently, and never leave a half-written archive that looks complete."""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import profcpu_testing as t


def start_collect(pid, out_dir, duration, extra=()):
    """Starts `profcpu collect` in the background; returns the Popen."""
    return subprocess.Popen(
        [t.PROFCPU, "collect", "-pid", str(pid), "-duration", str(duration), "-out", out_dir,
         *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_run_dir(out_dir, timeout=30):
    """The run folder profcpu created under out_dir, once its recording exists."""
    found = []

    def ready():
        for name in os.listdir(out_dir):
            path = os.path.join(out_dir, name)
            if os.path.isfile(os.path.join(path, "recording.zst")):
                found.append(path)
                return True
        return False

    if not t.wait_for(ready, timeout=timeout):
        raise AssertionError(f"no run folder with a recording appeared in {out_dir}")
    return found[0]


def finish(proc, timeout=120):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"profcpu did not finish in {timeout}s; stderr:\n{err}")
    return proc.returncode, out, err


def printed_run_dir(out):
    lines = out.strip().splitlines()
    if not lines or not os.path.isdir(lines[-1]):
        raise AssertionError(f"profcpu printed no run folder: {out!r}")
    return lines[-1]


class TargetExitsTest(unittest.TestCase):
    def test_target_exits_mid_collection(self):
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        target = t.start([t.fixture("cpu_shares")])
        self.addCleanup(t.stop, target)
        proc = start_collect(target.pid, tmp.path, duration=60)
        wait_for_run_dir(tmp.path)
        time.sleep(2)
        target.kill()
        target.wait()
        # Collection must end with the target, not run out its 60 s.
        code, out, err = finish(proc, timeout=50)
        self.assertEqual(code, 0, err)
        run_dir = printed_run_dir(out)
        meta = t.read_metadata(run_dir)
        self.assertEqual(meta["collection"]["stop_reason"], "target exited")
        self.assertTrue(meta["collection"]["complete"])
        self.assertLess(meta["collection"]["duration_seconds"], 40)
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertGreater(t.samples_with(folded, lambda f: f.startswith("burn_")), 20, folded)
        self.assertTrue(os.path.isfile(os.path.join(run_dir, "prof.tar.gz")))


class ExecTest(unittest.TestCase):
    def test_target_execs_another_fixture(self):
        """exec_chain burns in burn_before_exec, then becomes cpu_shares (same
        pid): frames on both sides of the exec are named from the right binary."""
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        target = t.start([t.fixture("exec_chain"), "2", t.fixture("cpu_shares")])
        self.addCleanup(t.stop, target)
        time.sleep(0.2)
        run_dir = t.collect(target.pid, tmp.path, duration=5, freq=199)
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        before = {s: c for s, c in folded.items() if "burn_before_exec" in s}
        after = {s: c for s, c in folded.items() if any(f.startswith("burn_") and f != "burn_before_exec"
                                                        for f in s)}
        self.assertGreater(sum(before.values()), 20, folded)
        self.assertGreater(sum(after.values()), 20, folded)
        # The comm changes at the exec; the old program's symbols never name
        # the new program's frames, nor the other way round.
        self.assertTrue(all(s[0] == "exec_chain" for s in before), before)
        self.assertTrue(all(s[0] == "cpu_shares" for s in after), after)
        for stack in after:
            self.assertNotIn("burn_before_exec", stack)
        unknown_after = sum(c for s, c in after.items() if any("[unknown]" in f for f in s[1:]))
        self.assertLess(unknown_after, sum(after.values()) * 0.1, after)


class ThreadChurnTest(unittest.TestCase):
    def test_thousand_threads_a_second(self):
        """Threads living 0.3 ms each, 1,000 a second. Per-thread events (perf
        record -p does the same) count each new thread from zero, so a thread
        shorter than one sampling period is never sampled: sample at ~5 kHz
        (0.2 ms), as one would to see such threads."""
        with open("/proc/sys/kernel/perf_event_max_sample_rate") as f:
            freq = min(4999, int(f.read()))
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        target = subprocess.Popen([t.fixture("thread_churn"), "1000"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(target.stdout.close)
        self.addCleanup(t.stop, target)
        self.assertEqual(target.stdout.readline().strip(), "ready")
        run_dir = t.collect(target.pid, tmp.path, duration=4, freq=freq)
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        churn = t.samples_with(folded, lambda f: f == "churn_worker")
        self.assertGreater(churn, 50, folded)
        # Threads that lived a millisecond were followed: many distinct tids.
        tids = set()
        with open(os.path.join(run_dir, "perf_script.out"), encoding="utf-8",
                  errors="replace") as f:
            for line in f:
                m = re.match(r"^\S.*?\s+(\d+)/(\d+)\s", line)
                if m:
                    tids.add(int(m.group(2)))
        self.assertGreater(len(tids), 100, f"only {len(tids)} distinct threads sampled")
        meta = t.read_metadata(run_dir)
        self.assertTrue(meta["collection"]["complete"])
        self.assertEqual(meta["samples"]["total"], sum(folded.values()))


class SignalTest(unittest.TestCase):
    def run_and_signal(self, sig):
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        target = t.start([t.fixture("cpu_shares")])
        self.addCleanup(t.stop, target)
        proc = start_collect(target.pid, tmp.path, duration=60)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        run_dir = wait_for_run_dir(tmp.path)
        # Past the first one-second flush of the recording.
        time.sleep(2.5)
        proc.send_signal(sig)
        code, out, err = finish(proc, timeout=60)
        return tmp, run_dir, code, out, err

    def check_graceful(self, sig):
        _, run_dir, code, out, err = self.run_and_signal(sig)
        self.assertEqual(code, 0, err)
        self.assertEqual(printed_run_dir(out), run_dir)
        meta = t.read_metadata(run_dir)
        self.assertEqual(meta["collection"]["stop_reason"], "signal")
        self.assertTrue(meta["collection"]["complete"])
        self.assertGreater(meta["samples"]["total"], 50)
        self.assertTrue(os.path.isfile(os.path.join(run_dir, "prof.tar.gz")))
        self.assertFalse(os.path.exists(os.path.join(run_dir, "prof.tar.gz.partial")))

    def test_sigint_stops_and_writes_outputs(self):
        self.check_graceful(signal.SIGINT)

    def test_sigterm_stops_and_writes_outputs(self):
        self.check_graceful(signal.SIGTERM)

    def test_sigkill_leaves_a_readable_recording(self):
        _, run_dir, code, out, err = self.run_and_signal(signal.SIGKILL)
        self.assertEqual(code, -signal.SIGKILL)
        names = set(os.listdir(run_dir))
        self.assertIn("recording.zst", names)
        # Killed while sampling: no archive, and nothing posing as one.
        self.assertNotIn("prof.tar.gz", names)
        self.assertNotIn("prof.tar.gz.partial", names)
        result = t.run_profcpu(["postprocess", "-dir", run_dir])
        self.assertEqual(printed_run_dir(result.stdout), run_dir)
        meta = t.read_metadata(run_dir)
        self.assertFalse(meta["collection"]["complete"])
        self.assertNotIn("stop_reason", meta["collection"])
        # Everything up to the last flush (about once a second) is there.
        self.assertGreater(meta["samples"]["total"], 50)
        # (Native frames stay unnamed: profcpu died before it symbolized, and
        # postprocess never reads a live process's files.)
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertEqual(sum(folded.values()), meta["samples"]["total"])
        self.assertTrue(all(stack[0] == "cpu_shares" for stack in folded), folded)


class DiskFullTest(unittest.TestCase):
    """-out on a small tmpfs. Whether the disk fills while sampling or while
    writing the outputs, profcpu fails with a clear error and leaves no
    prof.tar.gz (nor its .partial) behind."""

    def setUp(self):
        self.mount = tempfile.mkdtemp(prefix="profcpu-full-")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", self.mount], check=True)
        self.addCleanup(lambda: shutil.rmtree(self.mount, ignore_errors=True))
        self.addCleanup(subprocess.run, ["umount", "-l", self.mount], check=False)
        self.target = t.start([t.fixture("demo_workload")])
        self.addCleanup(t.stop, self.target)

    def fill_leaving(self, free_bytes):
        st = os.statvfs(self.mount)
        filler = st.f_bavail * st.f_frsize - free_bytes
        with open(os.path.join(self.mount, "filler"), "wb") as f:
            f.write(b"\0" * max(0, filler))

    def check_failed_cleanly(self, result):
        self.assertNotEqual(result.returncode, 0, result.stderr)
        self.assertIn("No space left on device", result.stderr)
        for dirpath, _, files in os.walk(self.mount):
            for name in files:
                self.assertFalse(name.startswith("prof.tar.gz"),
                                 f"{os.path.join(dirpath, name)} left on a full disk")

    def test_disk_fills_while_sampling(self):
        self.fill_leaving(24 * 1024)
        result = t.run_profcpu(["collect", "-pid", str(self.target.pid), "-duration", "6",
                                "-freq", "999", "-out", self.mount], check=False, timeout=120)
        self.check_failed_cleanly(result)

    def test_disk_fills_while_writing_outputs(self):
        # Room for the recording (compressed, small) but not for the much
        # larger perf_script.out, flame graph and archive.
        self.fill_leaving(400 * 1024)
        result = t.run_profcpu(["collect", "-pid", str(self.target.pid), "-duration", "3",
                                "-freq", "999", "-out", self.mount], check=False, timeout=120)
        self.check_failed_cleanly(result)
        runs = [d for d in os.listdir(self.mount) if d != "filler"]
        self.assertEqual(len(runs), 1, runs)
        # The recording itself survived and says where to go from here.
        self.assertTrue(os.path.isfile(os.path.join(self.mount, runs[0], "recording.zst")))
        self.assertIn("postprocess", result.stderr)


class PerfMapCopyOnAFullDiskTest(unittest.TestCase):
    def test_copying_perf_maps_leaves_the_disk_to_the_recording(self):
        """Perf maps are copied into the run folder while the target runs
        (collector/perf_map_tailer.h), on the recording's disk. With less than
        64 MiB free there the copying stops with a warning, the run succeeds,
        and the map, still there, is read in place."""
        mount = tempfile.mkdtemp(prefix="profcpu-full-")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", mount], check=True)
        self.addCleanup(lambda: shutil.rmtree(mount, ignore_errors=True))
        self.addCleanup(subprocess.run, ["umount", "-l", mount], check=False)
        names = os.path.join(mount, "names")
        with open(names, "wb") as f:
            f.write(b"jit_named_in_place\0")
        target = subprocess.Popen([t.fixture("fake_jit"), "--perf-map", names],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(target.stdout.close)
        self.addCleanup(t.stop, target)
        pid = int(target.stdout.readline().split()[1])
        self.addCleanup(lambda: os.path.exists(f"/tmp/perf-{pid}.map") and
                        os.unlink(f"/tmp/perf-{pid}.map"))
        result = t.run_profcpu(["collect", "-pid", str(pid), "-duration", "2", "-out", mount])
        run_dir = result.stdout.strip().splitlines()[-1]
        warnings = " ".join(t.read_metadata(run_dir)["warnings"])
        self.assertIn("kept for the recording", warnings)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "jit", f"perf-{pid}.map.partial")))
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertGreater(t.samples_with(folded, lambda f: f.startswith("jit_named_in_place")), 10)


class RingBufferOverrunTest(unittest.TestCase):
    def test_losses_are_counted_and_shown(self):
        """-mmap-pages 1 at a high frequency, and profcpu itself stopped for a
        second (SIGSTOP) so the kernel's ring buffers must overflow: losses
        appear on stderr, in metadata.json and in perf_script.out's header."""
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        target = t.start([t.fixture("cpu_shares")])
        self.addCleanup(t.stop, target)
        with open("/proc/sys/kernel/perf_event_max_sample_rate") as f:
            freq = min(20000, int(f.read()))
        proc = start_collect(target.pid, tmp.path, duration=5,
                             extra=["-freq", str(freq), "-mmap-pages", "1"])
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        wait_for_run_dir(tmp.path)
        time.sleep(1)
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(1)
        os.kill(proc.pid, signal.SIGCONT)
        code, out, err = finish(proc)
        self.assertEqual(code, 0, err)
        run_dir = printed_run_dir(out)
        meta = t.read_metadata(run_dir)
        lost = meta["samples"]["lost_ring_buffer"] + meta["samples"]["lost_dropped_by_kernel"]
        self.assertGreater(lost, 0, meta["samples"])
        summaries = re.findall(r"(\d+) samples, (\d+) lost", err)
        self.assertTrue(summaries, err)
        self.assertEqual(int(summaries[-1][1]), lost, err)
        self.assertIn("lost", " ".join(meta["warnings"]))
        with open(os.path.join(run_dir, "perf_script.out"), encoding="utf-8",
                  errors="replace") as f:
            header = "".join(line for line in f if line.startswith("#"))
        self.assertRegex(header, r"ring buffer full.*[1-9]")


if __name__ == "__main__":
    unittest.main()
