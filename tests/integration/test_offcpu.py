"""Off-CPU, wall-clock and BPF-backend profiles of real processes with the
real BPF programs: blocked time attributed to the right stacks within 10%,
wall mode split between [on-cpu] and [off-cpu], in-kernel counted on-CPU
samples, and exact explanations when BPF is not allowed."""

import collections
import os
import re
import shutil
import subprocess
import time
import unittest

import profcpu_testing as t

# offcpu_blocker blocks ROUNDS x MS in each of three ways.
ROUNDS = 4
MS = 150
KNOWN_US = ROUNDS * MS * 1000
WAYS = ("block_on_pipe", "block_on_futex", "block_in_nanosleep")


def measured_us(said):
    """The time offcpu_blocker measured for each way, in microseconds (its
    line "pipe=S futex=S nanosleep=S"). At least the nominal KNOWN_US; more on
    a loaded machine, where waking up waits for a CPU (off-CPU time too)."""
    m = re.search(r"pipe=([\d.]+) futex=([\d.]+) nanosleep=([\d.]+)", said)
    if m is None:
        raise AssertionError(f"offcpu_blocker did not print its times: {said!r}")
    return dict(zip(WAYS, (float(x) * 1e6 for x in m.groups())))


record = t.record


def weight(folded, *frames):
    """Sum of the stacks holding every frame in `frames`, in that order."""
    total = 0
    for stack, count in folded.items():
        position = 0
        for frame in stack:
            if position < len(frames) and frames[position](frame):
                position += 1
        if position == len(frames):
            total += count
    return total


def named(name):
    return lambda frame: frame == name


def containing(text):
    return lambda frame: text in frame


class OffCpuTest(unittest.TestCase):
    """One -mode offcpu run of the pipe/futex/nanosleep fixture."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        cls.run_dir, cls.fixture_said = record(cls.tmp.path, ["-mode", "offcpu"],
                                               [t.fixture("offcpu_blocker"), str(ROUNDS), str(MS)])
        cls.folded = t.read_folded(os.path.join(cls.run_dir, "folded_stacks.out"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertKnownTime(self, function, kernel_frame):
        user = weight(self.folded, named("main"), named(function))
        with_kernel = weight(self.folded, named("main"), named(function), containing(kernel_frame))
        known = measured_us(self.fixture_said)[function]
        self.assertGreater(known, KNOWN_US * 0.98, self.fixture_said)
        self.assertAlmostEqual(user, known, delta=known * 0.10,
                               msg=f"{function}: {user} us off-CPU, the fixture measured "
                                   f"{known:.0f}\n{self.folded}")
        # The kernel's path shows why it blocked.
        self.assertAlmostEqual(with_kernel, user, delta=KNOWN_US * 0.02, msg=kernel_frame)

    def test_pipe_read_time_is_attributed(self):
        self.assertKnownTime("block_on_pipe", "pipe_read")

    def test_stacks_end_where_the_thread_slept(self):
        # Not in the scheduler probe's own frames (__traceiter_sched_switch
        # and the like): those are profcpu's, not the application's.
        probe = ("__traceiter_", "__bpf_trace_", "bpf_trace_run", "bpf_prog_")
        leaves = collections.Counter(stack[-1] for stack in self.folded)
        self.assertFalse([leaf for leaf in leaves if leaf.startswith(probe)], leaves)
        self.assertGreater(sum(c for leaf, c in leaves.items() if "schedule" in leaf),
                           0.9 * sum(leaves.values()), leaves)

    def test_futex_wait_time_is_attributed(self):
        self.assertKnownTime("block_on_futex", "futex_wait")

    def test_nanosleep_time_is_attributed(self):
        self.assertKnownTime("block_in_nanosleep", "nanosleep")

    def test_outputs_as_for_on_cpu_collection(self):
        for name in ["flamegraph.svg", "folded_stacks.out", "perf_script.out", "prof.tar.gz",
                     "metadata.json", "profcpu.log", "recording.zst", "symbols.bin"]:
            self.assertGreater(os.path.getsize(os.path.join(self.run_dir, name)), 0, name)

    def test_flamegraph_is_cool_and_counts_microseconds(self):
        with open(os.path.join(self.run_dir, "flamegraph.svg"), encoding="utf-8") as f:
            svg = f.read()
        self.assertIn("Off-CPU Time Flame Graph", svg)
        self.assertIn("block_on_futex", svg)
        self.assertRegex(svg, r"block_on_futex \([0-9,]+ microseconds")
        fills = [tuple(map(int, m)) for m in re.findall(r'fill="rgb\((\d+),(\d+),(\d+)\)"', svg)]
        self.assertGreater(len(fills), 10)
        # flamegraph.pl's "blue" palette: blue dominates every frame.
        self.assertTrue(all(b > r and b > g for r, g, b in fills), fills[:5])

    def test_metadata_and_perf_script(self):
        meta = t.read_metadata(self.run_dir)
        self.assertEqual(meta["collection"]["mode"], "offcpu")
        self.assertEqual(meta["samples"]["weight"], "microseconds")
        self.assertGreaterEqual(meta["samples"]["offcpu_events"], 3 * ROUNDS)
        self.assertEqual(meta["samples"]["lost_bpf_ring_buffer"], 0)
        samples = t.parse_like_flamescope(os.path.join(self.run_dir, "perf_script.out"))
        self.assertEqual(len(samples), meta["samples"]["offcpu_events"])
        with open(os.path.join(self.run_dir, "perf_script.out"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("offcpu-time:", text)
        # Periods are the microseconds folded.
        periods = [int(m) for m in re.findall(r"^\S.*?:\s+(\d+) offcpu-time:", text, re.M)]
        self.assertEqual(sum(periods), sum(self.folded.values()))

    def test_postprocess_from_archive_alone_gives_the_same_stacks(self):
        self.assertEqual(t.folded_from_archive_alone(self.run_dir),
                         t.read_bytes(os.path.join(self.run_dir, "folded_stacks.out")))


class WallTest(unittest.TestCase):
    """-mode wall on a fixture half computing, half sleeping."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        cls.seconds = 3
        cls.run_dir, _ = record(cls.tmp.path, ["-mode", "wall", "-freq", "999"],
                                [t.fixture("half_sleeper"), str(cls.seconds), "50"])
        cls.folded = t.read_folded(os.path.join(cls.run_dir, "folded_stacks.out"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_stack_is_rooted_under_on_or_off_cpu(self):
        for stack in self.folded:
            self.assertIn(stack[1], ("[on-cpu]", "[off-cpu]"), stack)

    def test_about_half_on_and_half_off_cpu(self):
        on = weight(self.folded, named("[on-cpu]"), named("compute_phase"))
        sleeping = weight(self.folded, named("[off-cpu]"), named("sleep_phase"))
        # Waiting for a CPU while computing (a busy machine) is off-CPU time
        # too, shown under compute_phase with the interrupt that preempted it.
        waiting = weight(self.folded, named("[off-cpu]"), named("compute_phase"))
        total = sum(self.folded.values())
        self.assertGreater(on + sleeping + waiting, 0.9 * total, self.folded)
        self.assertAlmostEqual(on / sleeping, 1.0, delta=0.2,
                               msg=f"on-CPU {on} us, sleeping {sleeping} us, waiting for a CPU "
                                   f"{waiting} us")
        if waiting < 0.05 * total:  # an idle machine: half and half of the wall time
            self.assertAlmostEqual(on / total, 0.5, delta=0.1)
        # The weights are time: the run's wall time, give or take start-up.
        self.assertAlmostEqual(total / 1e6, self.seconds, delta=0.15 * self.seconds)

    def test_graph_says_microseconds(self):
        with open(os.path.join(self.run_dir, "flamegraph.svg"), encoding="utf-8") as f:
            svg = f.read()
        self.assertIn("Wall-Clock Time Flame Graph", svg)
        self.assertRegex(svg, r"\[on-cpu\] \([0-9,]+ microseconds")
        self.assertEqual(t.read_metadata(self.run_dir)["collection"]["mode"], "wall")

    def test_waiting_is_blue_and_running_warm(self):
        with open(os.path.join(self.run_dir, "flamegraph.svg"), encoding="utf-8") as f:
            svg = f.read()
        frames = [(name, float(x), float(y), float(w), tuple(map(int, rgb)))
                  for name, x, y, w, *rgb in re.findall(
                      r'<g><title>([^<]*?) \([^<]*</title><rect x="([\d.]+)" y="([\d.]+)" '
                      r'width="([\d.]+)"[^>]*fill="rgb\((\d+),(\d+),(\d+)\)"', svg)]
        self.assertGreater(len(frames), 10, svg[:2000])

        def subtree(root):
            (_, x0, y0, w0, _), = [f for f in frames if f[0] == root]
            # Callees are drawn above their caller (smaller y), within its width.
            return [f for f in frames if f[2] <= y0 and f[1] >= x0 - 0.01 and
                    f[1] + f[3] <= x0 + w0 + 0.01]

        def blue(rgb):
            return rgb[2] > rgb[0] and rgb[2] > rgb[1]
        waiting, running = subtree("[off-cpu]"), subtree("[on-cpu]")
        self.assertTrue(any(f[0] == "sleep_phase" for f in waiting), waiting)
        self.assertTrue(any(f[0] == "compute_phase" for f in running), running)
        self.assertEqual([f for f in waiting if not blue(f[4])], [])
        self.assertEqual([f for f in running if blue(f[4])], [])


def cgroup_v2_mount():
    for path in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if os.path.exists(os.path.join(path, "cgroup.controllers")):
            return path
    raise AssertionError("no cgroup v2 hierarchy: container profiling needs one")


class ScopeTest(unittest.TestCase):
    """Off-CPU time of a container's cgroup (-container) and of every process
    on the machine (-a): found without naming the process. The fixture waits
    two seconds before it blocks, time for profcpu to attach."""

    def setUp(self):
        self.tmp = t.TempDir()
        self.addCleanup(self.tmp.cleanup)

    def start_delayed(self, fixture_argv, cgroup=None):
        """Starts the fixture after a 2 s sleep, in `cgroup` when given (the
        shell moves itself there before it execs the fixture)."""
        command = " ".join(fixture_argv)
        enter = f"echo 0 > {cgroup}/cgroup.procs && " if cgroup else ""
        proc = subprocess.Popen(["sh", "-c", f"{enter}sleep 2 && exec {command}"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(t.stop, proc)
        return proc

    def make_cgroup(self):
        path = os.path.join(cgroup_v2_mount(), f"profcpu-test-{os.getpid()}")
        os.mkdir(path)
        self.addCleanup(os.rmdir, path)
        return path

    def collect(self, args):
        result = t.run_profcpu(["collect", *args, "-out", self.tmp.path], timeout=120)
        run_dir = result.stdout.strip().splitlines()[-1]
        return run_dir, t.read_folded(os.path.join(run_dir, "folded_stacks.out"))

    def test_container_cgroup_known_times(self):
        cgroup = self.make_cgroup()
        fixture = self.start_delayed([t.fixture("offcpu_blocker"), str(ROUNDS), str(MS)], cgroup)
        # Stops when the cgroup empties, long before the duration.
        run_dir, folded = self.collect(["-container", cgroup, "-mode", "offcpu",
                                        "-duration", "60"])
        said = fixture.communicate(timeout=30)[0]
        meta = t.read_metadata(run_dir)
        self.assertEqual(meta["collection"]["stop_reason"], "container exited")
        self.assertEqual(meta["target"], f"cgroup {cgroup}")
        for function, known in measured_us(said).items():
            user = weight(folded, named("main"), named(function))
            self.assertAlmostEqual(user, known, delta=known * 0.10,
                                   msg=f"{function}: {user} us (the fixture measured {said})\n"
                                       f"{folded}")
        # Only the cgroup's processes: the shell that became the fixture, and
        # its sleep.
        self.assertEqual({stack[0] for stack in folded} - {"sh", "sleep"}, {"offcpu_blocker"})
        # The sleep was blocked already when collection began: it counts
        # from then (found in the cgroup by the start-up snapshot).
        self.assertGreater(weight(folded, named("sleep"), containing("nanosleep")), 0.3e6, folded)

    def test_container_cgroup_wall(self):
        cgroup = self.make_cgroup()
        fixture = self.start_delayed([t.fixture("half_sleeper"), "2", "50"], cgroup)
        run_dir, folded = self.collect(["-container", cgroup, "-mode", "wall", "-freq", "499",
                                        "-duration", "60"])
        fixture.communicate(timeout=30)
        on = weight(folded, named("[on-cpu]"), named("compute_phase"))
        off = weight(folded, named("[off-cpu]"), named("sleep_phase"))
        self.assertGreater(on, 0.5e6, folded)
        self.assertGreater(off, 0.5e6, folded)

    def test_every_process(self):
        fixture = self.start_delayed([t.fixture("offcpu_blocker"), str(ROUNDS), str(MS)])
        run_dir, folded = self.collect(["-a", "-mode", "offcpu", "-duration", "6"])
        said = fixture.communicate(timeout=30)[0]
        self.assertEqual(t.read_metadata(run_dir)["target"], "all processes")
        self.assertGreater(len({stack[0] for stack in folded}), 3, "other processes too")
        for function in ("block_on_pipe", "block_on_futex", "block_in_nanosleep"):
            self.assertGreater(weight(folded, named("main"), named(function)), 0, function)
        # The fixture's main thread blocked 3 x ROUNDS times for MS each. On a
        # whole machine the stack map may drop a stack (counted, and that
        # stay loses its frames), so its stays are counted by thread, not stack.
        long_stays = 0
        with open(os.path.join(run_dir, "perf_script.out"), encoding="utf-8",
                  errors="replace") as f:
            for m in re.finditer(r"^offcpu_blocker\s+(\d+)/(\d+)\s.*?:\s+(\d+) offcpu-time:",
                                 f.read(), re.M):
                if m.group(1) == m.group(2) == str(fixture.pid) and int(m.group(3)) > MS * 700:
                    long_stays += int(m.group(3))
        known = sum(measured_us(said).values())
        self.assertAlmostEqual(long_stays, known, delta=known * 0.10,
                               msg=f"the fixture measured {said}")


class LongStayTest(unittest.TestCase):
    """Stays longer than the collection: a thread still blocked when it ends
    (a hang) counts up to the end, and one blocked already when it begins (an
    idle worker, a thread stuck on a lock) counts from the beginning, with
    its stacks, instead of vanishing."""

    def setUp(self):
        self.tmp = t.TempDir()
        self.addCleanup(self.tmp.cleanup)

    def collect(self, pid, seconds):
        result = t.run_profcpu(["collect", "-pid", str(pid), "-mode", "offcpu",
                                "-duration", str(seconds), "-out", self.tmp.path], timeout=60)
        run_dir = result.stdout.strip().splitlines()[-1]
        with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
            log = f.read()
        return t.read_folded(os.path.join(run_dir, "folded_stacks.out")), log

    def test_blocked_until_the_end(self):
        # After a second (profcpu attached by then), main blocks on a pipe and
        # its helper in nanosleep, both for 60 s: far past the collection.
        fixture = subprocess.Popen(["sh", "-c", f"sleep 1 && exec {t.fixture('offcpu_blocker')} "
                                    "1 60000"], stdout=subprocess.DEVNULL)
        self.addCleanup(t.stop, fixture)
        seconds = 3
        folded, _ = self.collect(fixture.pid, seconds)
        self.assertIsNone(fixture.poll(), "the fixture must still be blocked")
        on_pipe = weight(folded, named("main"), named("block_on_pipe"), containing("pipe_read"))
        # Blocked from about 1 s in (after the shell's sleep and the exec) to
        # the end: well over half of the remaining two seconds, never more.
        self.assertGreater(on_pipe, 1.0e6, folded)
        self.assertLess(on_pipe, seconds * 1e6, folded)
        helper = weight(folded, named("offcpu_blocker"), containing("nanosleep"))
        self.assertGreater(helper, 1.0e6, folded)

    def test_blocked_from_before_the_start(self):
        # Blocked on the pipe and in nanosleep for 60 s from the start, so
        # both threads are blocked when profcpu attaches, and never wake.
        fixture = subprocess.Popen([t.fixture("offcpu_blocker"), "1", "60000"],
                                   stdout=subprocess.DEVNULL)
        self.addCleanup(t.stop, fixture)
        time.sleep(0.5)
        seconds = 2
        folded, log = self.collect(fixture.pid, seconds)
        self.assertIn("2 threads were already blocked when collection began", log)
        # The whole collection, under the stacks they blocked with: the user
        # stack walked from the registers they entered the kernel with.
        on_pipe = weight(folded, named("__libc_start_call_main"), named("main"),
                         named("block_on_pipe"), containing("pipe_read"))
        helper = weight(folded, named("offcpu_blocker"), containing("nanosleep"))
        for what, us in (("main on the pipe", on_pipe), ("helper in nanosleep", helper)):
            self.assertAlmostEqual(us, seconds * 1e6, delta=seconds * 1e6 * 0.10,
                                   msg=f"{what}: {us} us\n{folded}")


class PidNamespaceTest(unittest.TestCase):
    """profcpu and its target in a PID namespace of their own, as in a
    sidecar sharing the app's: the kernel's pids are not the ones profcpu
    sees, and the BPF programs must number tasks as profcpu does."""

    def setUp(self):
        self.tmp = t.TempDir()
        self.addCleanup(self.tmp.cleanup)

    def record_in_namespace(self, args, command):
        result = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", t.PROFCPU,
                                 "record", "-out", self.tmp.path, *args, "--", *command],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.said = result.stdout
        run_dir = result.stdout.strip().splitlines()[-1]
        return run_dir, t.read_folded(os.path.join(run_dir, "folded_stacks.out"))

    def test_offcpu_known_times(self):
        run_dir, folded = self.record_in_namespace(
            ["-mode", "offcpu"], [t.fixture("offcpu_blocker"), str(ROUNDS), str(MS)])
        for function, known in measured_us(self.said).items():
            user = weight(folded, named("main"), named(function))
            self.assertAlmostEqual(user, known, delta=known * 0.10, msg=f"{function}: {folded}")
        # profcpu is pid 1 there; the fixture it started is pid 2.
        self.assertEqual([p["pid"] for p in t.read_metadata(run_dir)["processes"]][:1], [2])

    def test_bpf_backend_names_the_samples(self):
        _, folded = self.record_in_namespace(["-backend", "bpf", "-freq", "499"],
                                             [t.fixture("cpu_shares"), "3"])
        counts = {name: t.samples_with(folded, lambda f, n=name: f == n)
                  for name in ["burn_twenty_percent", "burn_thirty_percent", "burn_fifty_percent"]}
        self.assertGreater(sum(counts.values()), 100, folded)
        self.assertGreater(counts["burn_fifty_percent"], counts["burn_twenty_percent"], counts)


class BpfBackendTest(unittest.TestCase):
    """-backend bpf on the 20/30/50% fixture: shares as with perf, with and
    without frame pointers."""

    def setUp(self):
        self.tmp = t.TempDir()

    def tearDown(self):
        self.tmp.cleanup()

    def _collect(self, extra):
        proc = t.start([t.fixture("cpu_shares")])
        time.sleep(0.3)
        try:
            return t.collect(proc.pid, self.tmp.path, duration=4, freq=999,
                             extra=["-backend", "bpf", *extra])
        finally:
            t.stop(proc)

    def assertShares(self, folded):
        counts = {name: t.samples_with(folded, lambda f, n=name: f == n)
                  for name in ["burn_twenty_percent", "burn_thirty_percent", "burn_fifty_percent"]}
        total = sum(counts.values())
        # 4 s at 999 Hz of one CPU's worth of work; fewer on a busy machine.
        self.assertGreater(total, 300, counts)
        for name, truth in [("burn_twenty_percent", 20), ("burn_thirty_percent", 30),
                            ("burn_fifty_percent", 50)]:
            self.assertAlmostEqual(100.0 * counts[name] / total, truth, delta=5.0, msg=counts)

    def test_no_stack_lost_without_frame_pointers(self):
        """cpu_shares_nofp: rbp holds data, so every sample's user chain is the
        leaf plus made-up frames, thousands of distinct stacks. A stack map
        dropped 11% of them here (lost_stacks 878 of 7663 on main); inline
        stacks lose none, and the shares match the perf backend's and the
        fixture's own 20/30/50 measured on its thread CPU clock."""
        proc = t.start([t.fixture("cpu_shares_nofp")])
        time.sleep(0.3)
        shares = {}
        try:
            for backend in ["perf", "bpf"]:
                run_dir = t.collect(proc.pid, self.tmp.path, duration=6, freq=999,
                                    extra=["-backend", backend])
                folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
                counts = {name: t.samples_with(folded, lambda f, n=name: f == n)
                          for name in ["burn_twenty_percent", "burn_thirty_percent",
                                       "burn_fifty_percent"]}
                total = sum(counts.values())
                # 6 s at 999 Hz of one CPU's worth of work; fewer on a busy machine.
                self.assertGreater(total, 1500, (backend, counts))
                shares[backend] = {name: 100.0 * n / total for name, n in counts.items()}
                if backend == "bpf":
                    meta = t.read_metadata(run_dir)
                    self.assertEqual(meta["samples"]["lost_stacks"], 0)
                    self.assertEqual(meta["samples"]["lost_bpf_ring_buffer"], 0)
                    self.assertEqual(meta["samples"]["lost_bpf_map_full"], 0)
                    # Hardly a sample without its stacks (a bare comm frame). A
                    # fresh-clone CI run saw 1 in ~6,000: bpf_get_stack gave
                    # neither stack and nothing counts that as a loss yet (an
                    # open defect, named in issue 14's closing note).
                    bare = sum(n for stack, n in folded.items() if len(stack) == 1)
                    self.assertLessEqual(bare, 0.001 * sum(folded.values()),
                                         folded.most_common(5))
        finally:
            t.stop(proc)
        # The error of a share is the rounding at the ends of each 0.5-1.5 ms
        # slice of a burn_* call (about 0.1 point over 6 s), not a binomial
        # one: a point is far outside it, and inside the 2-2.8 point bias a
        # lossy stack map showed.
        for name, truth in [("burn_twenty_percent", 20), ("burn_thirty_percent", 30),
                            ("burn_fifty_percent", 50)]:
            self.assertAlmostEqual(shares["bpf"][name], shares["perf"][name], delta=1.0,
                                   msg=shares)
            self.assertAlmostEqual(shares["bpf"][name], truth, delta=1.0, msg=shares)

    def test_counted_in_the_kernel(self):
        run_dir = self._collect([])
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertShares(folded)
        meta = t.read_metadata(run_dir)
        self.assertEqual(meta["collection"]["backend"], "bpf")
        self.assertEqual(meta["samples"]["total"], sum(folded.values()))
        # Aggregated entries: far fewer than samples, periods summing to them.
        samples = t.parse_like_flamescope(os.path.join(run_dir, "perf_script.out"))
        self.assertLess(len(samples), meta["samples"]["total"] / 5)
        with open(os.path.join(run_dir, "perf_script.out"), encoding="utf-8") as f:
            periods = [int(m) for m in re.findall(r"^\S.*?:\s+(\d+) cpu-clock:", f.read(), re.M)]
        self.assertEqual(sum(periods), sum(folded.values()))
        # Counted samples carry no time of their own: -from/-to says so
        # rather than slicing them empty or wrong.
        result = t.run_profcpu(["postprocess", "-dir", run_dir, "-from", "1", "-to", "2"],
                               check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("record with -timestamps to slice by time", result.stderr)
        # Other filters count the samples kept, as many as the entries stand for.
        main_thread = t.read_metadata(run_dir)["processes"][0]["pid"]
        result = t.run_profcpu(["postprocess", "-dir", run_dir, "-tid", str(main_thread)])
        kept = sum(t.read_folded(os.path.join(run_dir, "folded_stacks.out")).values())
        self.assertEqual(t.read_metadata(run_dir)["samples"]["total"], kept)
        self.assertIn(f"{kept} of {meta['samples']['total']} samples kept", result.stderr)

    def test_timestamps_keep_every_sample(self):
        run_dir = self._collect(["-timestamps"])
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertShares(folded)
        samples = t.parse_like_flamescope(os.path.join(run_dir, "perf_script.out"))
        self.assertEqual(len(samples), sum(folded.values()))
        times = [s[0] for s in samples]
        self.assertEqual(times, sorted(times))
        self.assertGreater(times[-1] - times[0], 3.0)
        # Each sample has its time: -from/-to slice them.
        t.run_profcpu(["postprocess", "-dir", run_dir, "-from", "1", "-to", "2"])
        sliced = sum(t.read_folded(os.path.join(run_dir, "folded_stacks.out")).values())
        self.assertGreater(sliced, 0)
        self.assertLess(sliced, len(samples) / 2)


class HighSwitchRateTest(unittest.TestCase):
    def test_twenty_thousand_switches_a_second_lose_nothing(self):
        tmp = t.TempDir()
        try:
            # 20000 round trips = 40000 hand-offs at 20k a second: 2 s.
            run_dir, _ = record(tmp.path, ["-mode", "offcpu"],
                             [t.fixture("context_switcher"), "20000", "0", "20000"])
            meta = t.read_metadata(run_dir)
            # Most hand-offs find the other thread blocked (a few find it
            # still running and do not block): tens of thousands of stays.
            self.assertGreaterEqual(meta["samples"]["offcpu_events"], 20000)
            for loss in ["lost_bpf_ring_buffer", "lost_stacks", "lost_bpf_map_full"]:
                self.assertEqual(meta["samples"][loss], 0, loss)
            folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
            self.assertGreater(weight(folded, named("wait_turn"), containing("futex_wait")), 0)
        finally:
            tmp.cleanup()


class FlagTest(unittest.TestCase):
    """Mode flags that cannot work together are refused before anything runs."""

    def _refused(self, args, message):
        result = t.run_profcpu(["record", *args, "--", "true"], check=False)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(message, result.stderr)

    def test_bad_combinations(self):
        self._refused(["-mode", "sideways"], "unknown mode 'sideways'; modes: cpu, offcpu, wall")
        self._refused(["-backend", "ebpf"], "unknown backend 'ebpf'; backends: perf, bpf")
        self._refused(["-timestamps"], "-timestamps goes with -backend bpf")
        self._refused(["-mode", "wall", "-event", "instructions"],
                      "-mode wall weighs on-CPU samples by their time")


class WithoutBpfTest(unittest.TestCase):
    """Capabilities dropped with capsh: each BPF mode says exactly what is
    missing and what to do; the perf backend keeps working."""

    def setUp(self):
        self.tmp = t.TempDir()
        self.assertIsNotNone(shutil.which("capsh"), "capsh is required (libcap2-bin)")

    def tearDown(self):
        self.tmp.cleanup()

    def _without(self, caps, args):
        command = " ".join([t.PROFCPU, "record", "-out", self.tmp.path, *args, "--",
                            t.fixture("half_sleeper"), "1", "20"])
        return subprocess.run(["capsh", f"--drop={caps}", "--", "-c", command],
                              capture_output=True, text=True, timeout=120)

    def test_each_bpf_mode_names_the_missing_capability(self):
        for args, name in [(["-mode", "offcpu"], "-mode offcpu"), (["-mode", "wall"], "-mode wall"),
                           (["-backend", "bpf"], "-backend bpf")]:
            result = self._without("cap_bpf,cap_sys_admin", args)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertIn(f"{name} loads BPF programs, which needs CAP_BPF (or CAP_SYS_ADMIN)",
                          result.stderr)
            self.assertIn("--cap-add BPF", result.stderr)
            self.assertIn("-backend perf", result.stderr)
            self.assertNotIn("CAP_PERFMON", result.stderr.split("lack")[0])
        result = self._without("cap_bpf,cap_perfmon,cap_sys_admin", ["-mode", "offcpu"])
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("needs CAP_BPF and CAP_PERFMON", result.stderr)
        # Nothing was sampled: no run folder is left behind.
        self.assertEqual(os.listdir(self.tmp.path), [])

    def test_perf_backend_keeps_working_without_bpf(self):
        result = self._without("cap_bpf,cap_sys_admin", ["-mode", "cpu", "-backend", "perf"])
        self.assertEqual(result.returncode, 0, result.stderr)
        folded = t.read_folded(os.path.join(result.stdout.strip(), "folded_stacks.out"))
        self.assertGreater(t.samples_with(folded, named("compute_phase")), 10)


if __name__ == "__main__":
    unittest.main()
