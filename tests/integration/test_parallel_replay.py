"""The replay split across threads (fold/profile_builder_parallel.h) gives
the outputs of the one-thread replay byte for byte: real recordings (threads
and processes coming and going, an exec, JIT code named by a perf map and a
jitdump; stack copies of -callgraph fp+cfi and dwarf, whose unwinder answers
in recording order) postprocessed with PROFCPU_THREADS=1 and =4, in
10-sample slices, and a record whose replay split while it unwound."""

import os
import re
import shutil
import subprocess
import unittest
import zipfile

import profcpu_testing as t

# The page's compressed bytes may depend on how its data was compressed
# (render tests decode and compare it); the log and archive carry times.
NOT_COMPARED = {"profcpu.log", "prof.tar.gz", "profile.html"}


def postprocess(archive, dest, threads, extra=()):
    """postprocess in DEST (the exports carry its name: the same for both)."""
    os.makedirs(dest)
    shutil.copy(archive, dest)
    env = {**os.environ, "PROFCPU_THREADS": str(threads), "PROFCPU_REPLAY_SLICE_SAMPLES": "10"}
    env.pop("DEBUGINFOD_URLS", None)
    result = subprocess.run([t.PROFCPU, "postprocess", "-dir", dest, *extra], env=env,
                            capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"postprocess failed with {result.returncode}:\n{result.stderr}")
    with open(os.path.join(dest, "profcpu.log"), encoding="utf-8", errors="replace") as f:
        text = f.read()
    # The log goes on from the recording's: this postprocess's lines only.
    return text[text.rindex("profcpu postprocess"):]


def record_split(out_dir, args, command):
    """profcpu record with its replay split over 4 threads in 10-sample
    slices (the unwinder reads the target's files then); the run folder."""
    env = {**os.environ, "PROFCPU_THREADS": "4", "PROFCPU_REPLAY_SLICE_SAMPLES": "10"}
    env.pop("DEBUGINFOD_URLS", None)
    result = subprocess.run([t.PROFCPU, "record", "-out", out_dir, *args, "--", *command],
                            env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"record failed with {result.returncode}:\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1]


def outputs(run_dir):
    """name -> bytes of every output compared (a .trace.zip by its members:
    the zip stamps each entry with the time it was made)."""
    out = {}
    for name in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, name)
        if name in NOT_COMPARED or not os.path.isfile(path):
            continue
        if name.endswith(".trace.zip"):
            with zipfile.ZipFile(path) as z:
                for member in z.namelist():
                    out[f"{name}/{member}"] = z.read(member)
        else:
            out[name] = t.read_bytes(path)
    return out


class ParallelReplayTest(unittest.TestCase):
    def setUp(self):
        self.tmp = t.TempDir()
        self.addCleanup(self.tmp.cleanup)

    def assert_same_outputs(self, run_dir, what):
        archive = os.path.join(run_dir, "prof.tar.gz")
        for extra in ((), ("-format", "pprof,perfview")):
            one_dir = os.path.join(self.tmp.path, f"{what}-one{len(extra)}", "run")
            four_dir = os.path.join(self.tmp.path, f"{what}-four{len(extra)}", "run")
            one_log = postprocess(archive, one_dir, 1, extra)
            four_log = postprocess(archive, four_dir, 4, extra)
            self.assertNotIn("parallel replay:", one_log)
            line = re.search(r"parallel replay: [0-9.]+ s wall, serial [0-9.]+ s, (\d+) tasks on 4 threads, "
                             r"longest task [0-9.]+ s, task CPU [0-9.]+ s", four_log)
            self.assertIsNotNone(line, four_log)
            samples = int(re.search(r"replayed (\d+) samples", four_log).group(1))
            # 10-sample slices (and one for the records after the last sample).
            self.assertGreaterEqual(int(line.group(1)), samples // 10, four_log)
            one, four = outputs(one_dir), outputs(four_dir)
            self.assertIn("folded_stacks.out", one)
            self.assertIn("perf_script.out", one)
            self.assertEqual(sorted(one), sorted(four), what)
            for name in one:
                self.assertTrue(one[name] == four[name], f"{what}: {name} differs between 1 and 4 threads")

    def assert_unwound(self, run_dir, what):
        """The recording kept what its unwinder found (postprocess replays it)."""
        self.assertTrue(os.path.exists(os.path.join(run_dir, "unwound_stacks.bin")), what)

    def test_leaf_repair_of_fp_cfi(self):
        # write(2)'s glibc wrapper keeps no frame: the repair puts writer() back.
        run_dir, _ = t.record(os.path.join(self.tmp.path, "fpcfi"),
                              ["-freq", "4999", "-callgraph", "fp+cfi"],
                              [t.fixture("leaf_callers"), "writer", "2"])
        self.assert_unwound(run_dir, "leaf_callers")
        self.assert_same_outputs(run_dir, "leaf_callers")

    def test_dwarf_stacks(self):
        run_dir, _ = t.record(os.path.join(self.tmp.path, "dwarf"),
                              ["-freq", "999", "-callgraph", "dwarf"],
                              [t.fixture("demo_workload"), "2"])
        self.assert_unwound(run_dir, "demo_workload dwarf")
        self.assert_same_outputs(run_dir, "demo_workload dwarf")

    def test_record_unwinding_while_split(self):
        """Right after collection the unwinder reads the target's files, for
        the tracker, in order: the record's own outputs (replay split) are
        those of a one-thread postprocess of its archive (saved unwinds)."""
        for callgraph in ("fp+cfi", "dwarf"):
            run_dir = record_split(os.path.join(self.tmp.path, f"split-{callgraph}"),
                                   ["-freq", "999", "-callgraph", callgraph],
                                   [t.fixture("demo_workload"), "2"])
            with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8", errors="replace") as f:
                self.assertIn("parallel replay:", f.read(), callgraph)
            self.assert_unwound(run_dir, callgraph)
            one_dir = os.path.join(self.tmp.path, f"split-{callgraph}-one", "run")
            postprocess(os.path.join(run_dir, "prof.tar.gz"), one_dir, 1)
            recorded, one = outputs(run_dir), outputs(one_dir)
            for name in ("folded_stacks.out", "perf_script.out", "flamegraph.svg"):
                self.assertTrue(recorded[name] == one[name], f"{callgraph}: {name} differs")

    def test_threads_coming_and_going(self):
        run_dir, _ = t.record(os.path.join(self.tmp.path, "churn"),
                              ["-freq", "4999", "-callgraph", "fp"],
                              [t.fixture("thread_churn"), "1000", "3"])
        self.assert_same_outputs(run_dir, "thread_churn")

    def test_an_exec_and_two_programs(self):
        run_dir, _ = t.record(os.path.join(self.tmp.path, "exec"),
                              ["-freq", "999", "-callgraph", "fp"],
                              [t.fixture("exec_chain"), "1", t.fixture("demo_workload"), "2"])
        self.assert_same_outputs(run_dir, "exec_chain")

    def test_jit_code_named_by_perf_map_and_jitdump(self):
        names = os.path.join(self.tmp.path, "names")
        with open(names, "wb") as f:
            f.write(b"\0".join(f"jit_method_{i}".encode() for i in range(4)))
        run_dir, _ = t.record(os.path.join(self.tmp.path, "jit"),
                              ["-freq", "999", "-callgraph", "fp"],
                              [t.fixture("fake_jit"), "--regions", "8", "--perf-map", names,
                               "--jitdump", names, "--exit-after", "2"])
        self.assert_same_outputs(run_dir, "fake_jit")

    def test_the_demo_at_4999_hz(self):
        run_dir, _ = t.record(os.path.join(self.tmp.path, "demo"),
                              ["-freq", "4999", "-callgraph", "fp"],
                              [t.fixture("demo_workload"), "2"])
        self.assert_same_outputs(run_dir, "demo_workload")


if __name__ == "__main__":
    unittest.main()
