"""Stacks without the frame-pointer hole: the caller of a frameless libc
wrapper (write, nanosleep, poll, pthread_join's futex wait) is kept by
-callgraph fp+cfi, on the CPU and off it, and the fixture (leaf_callers)
checks the off-CPU time under each caller against what it measured itself.
Plain -callgraph fp is run too, to show the hole is real in this fixture."""

import os
import re
import unittest

import profcpu_testing as t

WRITE = "__GI___libc_write"


def share_with_caller(folded, caller, callee):
    """Of the samples whose stack holds `callee`, the share where `caller`
    is the frame right above it."""
    total = with_caller = 0
    for stack, count in folded.items():
        if callee not in stack:
            continue
        total += count
        at = stack.index(callee)
        if at > 0 and stack[at - 1] == caller:
            with_caller += count
    return total, (with_caller / total if total else 0.0)


def repeated_frames(folded, name):
    """Samples where `name` follows itself (leaf_callers never recurses)."""
    return sum(count for stack, count in folded.items()
               if any(a == b == name for a, b in zip(stack, stack[1:])))


class WriterOnCpuTest(unittest.TestCase):
    """writer() calls write(2) in a loop: every sample in write's path is
    writer's."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        command = [t.fixture("leaf_callers"), "writer", "3"]
        cls.run_dir, _ = t.record(cls.tmp.path, ["-freq", "999", "-callgraph", "fp+cfi"], command)
        cls.folded = t.read_folded(os.path.join(cls.run_dir, "folded_stacks.out"))
        cls.fp_dir, _ = t.record(cls.tmp.path, ["-freq", "999", "-callgraph", "fp"], command)
        cls.fp_folded = t.read_folded(os.path.join(cls.fp_dir, "folded_stacks.out"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_writer_calls_write_in_nearly_every_sample(self):
        total, share = share_with_caller(self.folded, "writer", WRITE)
        self.assertGreater(total, 500, "too few samples in write(2)")
        self.assertGreaterEqual(share, 0.95, f"{share:.3f} of {total} write samples under writer")

    def test_frame_pointers_alone_lose_the_writer(self):
        total, share = share_with_caller(self.fp_folded, "writer", WRITE)
        self.assertGreater(total, 500)
        self.assertLess(share, 0.5, "the fixture no longer shows the frame-pointer hole")

    def test_no_frame_is_counted_twice(self):
        for name in ("writer", "main", WRITE):
            self.assertEqual(repeated_frames(self.folded, name), 0, name)

    def test_metadata_counts_the_repairs(self):
        meta = t.read_metadata(self.run_dir)
        self.assertEqual(meta["collection"]["callgraph"], "fp+cfi,32768")
        repair = meta["leaf_repair"]
        # Nearly every sample is in write(2) or under it: its leaf had no frame.
        self.assertGreater(repair["repaired"], 0.8 * repair["stacks"])
        self.assertGreaterEqual(repair["frames_added"], repair["repaired"])
        self.assertTrue(os.path.exists(os.path.join(self.run_dir, "unwound_stacks.bin")))

    def test_postprocess_elsewhere_keeps_the_repairs(self):
        self.assertEqual(t.folded_from_archive_alone(self.run_dir),
                         t.read_bytes(os.path.join(self.run_dir, "folded_stacks.out")))


def measured(said, name):
    m = re.search(name + r"=([\d.]+)", said)
    if m is None:
        raise AssertionError(f"leaf_callers did not print {name}: {said!r}")
    return float(m.group(1))


def weight_under(folded, name):
    return sum(count for stack, count in folded.items() if name in stack)


class SleepWaitOffCpuTest(unittest.TestCase):
    """do_sleep() blocks in nanosleep, do_wait() in poll, both frameless
    glibc wrappers: the off-CPU time lands under each caller, as measured."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        command = [t.fixture("leaf_callers"), "sleepwait", "3"]
        cls.run_dir, cls.said = t.record(
            cls.tmp.path, ["-mode", "offcpu", "-callgraph", "fp+cfi"], command)
        cls.folded = t.read_folded(os.path.join(cls.run_dir, "folded_stacks.out"))
        cls.fp_dir, _ = t.record(cls.tmp.path, ["-mode", "offcpu", "-callgraph", "fp"], command)
        cls.fp_folded = t.read_folded(os.path.join(cls.fp_dir, "folded_stacks.out"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_time_under_each_caller_is_what_it_measured(self):
        for name in ("do_sleep", "do_wait"):
            truth_us = measured(self.said, name) * 1e6
            got_us = weight_under(self.folded, name)
            self.assertGreater(truth_us, 5e5, name)
            self.assertAlmostEqual(got_us / truth_us, 1.0, delta=0.1,
                                   msg=f"{name}: {got_us:.0f} us in the graph, {truth_us:.0f} measured")

    def test_frame_pointers_alone_lose_the_callers(self):
        total = sum(self.fp_folded.values())
        for name in ("do_sleep", "do_wait"):
            self.assertLess(weight_under(self.fp_folded, name), 0.1 * total, name)

    def test_no_frame_is_counted_twice(self):
        for name in ("do_sleep", "do_wait", "main"):
            self.assertEqual(repeated_frames(self.folded, name), 0, name)


class BlockedMainThreadTest(unittest.TestCase):
    """main waits in pthread_join, whose futex wait is two frameless levels
    down: the off-CPU stack keeps pthread_join and main above it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        cls.run_dir, cls.said = t.record(
            cls.tmp.path, ["-mode", "offcpu", "-callgraph", "fp+cfi"],
            [t.fixture("leaf_callers"), "join", "2"])
        cls.folded = t.read_folded(os.path.join(cls.run_dir, "folded_stacks.out"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_join_and_main_are_kept(self):
        join = re.compile(r"pthread_(clock|timed)?join")
        joined_us = 0
        for stack, count in self.folded.items():
            if "main" not in stack:
                continue
            below_main = stack[stack.index("main") + 1:]
            if below_main and join.search(below_main[0]):
                joined_us += count
        truth_us = measured(self.said, "joined") * 1e6
        self.assertAlmostEqual(joined_us / truth_us, 1.0, delta=0.1,
                               msg=f"{joined_us} us under main;pthread_join, {truth_us:.0f} joined")


if __name__ == "__main__":
    unittest.main()
