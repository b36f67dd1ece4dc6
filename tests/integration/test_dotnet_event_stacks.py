"""The .NET runtime events' stacks as profiles of their own (issue 28):
alloc_stacks.out (bytes, the allocated type as the leaf frame),
lock_wait_stacks.out (microseconds waited) and exception_stacks.out (throws,
the exception type as the leaf frame), folded as folded_stacks.out is
(fold/dotnet_event_profiles.h, render's run outputs).

The known-answer app (tests/dotnet/AllocLockApp, built at test time)
measures its own truth over a run that starts once profcpu's EventPipe
session is streaming ("go" on its stdin) and ends before the collection
does: bytes per allocation site (AllocSiteLarge allocates three times
AllocSiteSmall's, BigRecord against byte[]), microseconds waited per lock
site (WaitSiteA about 75%, WaitSiteB 25%) and throws per throw site
(ThrowSiteA's AlphaExceptions 75%, ThrowSiteB's BetaExceptions 25%). The
profiles must give the same shares within 3 points, the allocated bytes
within 10% of what the process allocated, and TraceEvent (PerfView's library:
tests/dotnet/TraceEventStacks) reading the same nettrace must agree on the
top allocating types and their stacks. postprocess of prof.tar.gz alone
rebuilds the same three files."""

import collections
import glob
import json
import os
import re
import shutil
import subprocess
import time
import unittest

import dotnet_testing as dn
import profcpu_testing as t
from test_exports import go_tool_pprof

# The app's measured run; the collection covers it with room on both sides.
SECONDS = 8
# EventPipe's session starts within ~1 s of collect's (the target is polled
# every 200 ms); room for a slow start and for the app's end.
DURATION = SECONDS + 10
SHARE_POINTS = 0.03
BYTES_TOLERANCE = 0.10

STACK_FILES = ("alloc_stacks.out", "lock_wait_stacks.out", "exception_stacks.out")


def read_folded(path):
    """A stackcollapse file as [(frames root first, weight)]; every line must
    be "frame;frame;... N" with N a positive integer."""
    stacks = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            stack, space, weight = line.rpartition(" ")
            if not space or not stack or not weight.isdigit() or int(weight) <= 0:
                raise AssertionError(f"{path}:{number} is not a folded stack: {line!r}")
            stacks.append((stack.split(";"), int(weight)))
    return stacks


def names(frame, method):
    """Whether a frame, as profcpu names JIT frames ("Ns.Type::Method[Tier]
    [Assembly]"), is `method` of the app."""
    return re.search(rf"::{method}(?![\w`])", frame) is not None


def weight_under(stacks, method):
    return sum(w for frames, w in stacks if any(names(f, method) for f in frames))


def share(part, other):
    return part / (part + other) if part + other else float("nan")


class DotnetEventStacksTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.app_dir = dn.build_project("AllocLockApp")
        cls.reader_dir = dn.build_project("TraceEventStacks")
        cls.tmp = t.TempDir()
        try:
            cls.run_dir, cls.truth, cls.pid = cls.collect_a_known_run(cls.tmp.path)
        except BaseException:
            cls.tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def collect_a_known_run(cls, out):
        """Runs the app under `profcpu collect -pid`; its measured run starts
        once the session streams and ends before the collection does. Returns
        the run folder, the app's truth and its pid."""
        app = subprocess.Popen([dn.DOTNET, os.path.join(cls.app_dir, "AllocLockApp.dll"), "all",
                                str(SECONDS), "stdin"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=cls.app_dir)
        collect = None
        try:
            dn.wait_ready(app)
            collect = subprocess.Popen([t.PROFCPU, "collect", "-pid", str(app.pid), "-duration",
                                        str(DURATION), "-freq", "49", "-format", "pprof",
                                        "-out", out],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            nettrace = os.path.join(out, "*", "dotnet", f"{app.pid}.nettrace")
            streaming = t.wait_for(lambda: any(os.path.getsize(p) > 0 for p in glob.glob(nettrace)),
                                   timeout=DURATION - SECONDS - 2)
            if not streaming:
                raise AssertionError(f"no EventPipe stream in {nettrace} after "
                                     f"{DURATION - SECONDS - 2} s")
            time.sleep(0.5)
            app.stdin.write("go\n")
            app.stdin.flush()
            line = app.stdout.readline()
            if not line.startswith("{"):
                raise AssertionError(f"the app printed {line!r}: {app.stderr.read()}")
            truth = json.loads(line)
            if collect.poll() is not None:
                raise AssertionError("the collection ended before the app's measured run did")
            stdout, stderr = collect.communicate(timeout=DURATION + 180)
            if collect.returncode != 0:
                raise AssertionError(f"profcpu collect failed ({collect.returncode}):\n{stderr}")
            run_dir = stdout.strip().splitlines()[-1]
            return run_dir, truth, app.pid
        finally:
            if collect is not None and collect.poll() is None:
                collect.kill()
                collect.communicate()
            app.stdin.close()
            try:
                app.wait(timeout=30)
            except subprocess.TimeoutExpired:
                t.stop(app)
            app.stdout.close()
            app.stderr.close()

    def stacks(self, name):
        path = os.path.join(self.run_dir, name)
        if not os.path.exists(path):
            with open(os.path.join(self.run_dir, "profcpu.log"), encoding="utf-8") as f:
                self.fail(f"{name} is missing from {sorted(os.listdir(self.run_dir))}; "
                          f"profcpu.log:\n{f.read()[-2500:]}")
        stacks = read_folded(path)
        self.assertTrue(stacks, f"{name} is empty")
        return stacks

    def assert_share(self, got_part, got_other, true_part, true_other, what):
        got, true = share(got_part, got_other), share(true_part, true_other)
        self.assertLessEqual(abs(got - true), SHARE_POINTS,
                             f"{what}: profile {got:.3f} ({got_part} / {got_other}), "
                             f"app {true:.3f} ({true_part} / {true_other})")

    def assert_leaf_types(self, stacks, method, type_name, what):
        """Every stack through `method` ends in a frame naming `type_name`,
        with `method` the first of the app's frames above it (the runtime's
        own managed frames may come between: a throw's dispatch,
        System.Runtime.EH::DispatchEx on .NET 9 and later)."""
        under = [frames for frames, _ in stacks if any(names(f, method) for f in frames)]
        self.assertTrue(under, f"{what}: no stack through {method}")
        def first_app_frame(frames):
            return next((f for f in reversed(frames[:-1]) if "AllocLockApp." in f), "")
        wrong = [frames[-3:] for frames in under
                 if type_name not in frames[-1] or not names(first_app_frame(frames), method)]
        self.assertFalse(wrong, f"{what}: stacks through {method} not ending in "
                                f"{method}'s {type_name}: {wrong[:5]}")

    def test_files_are_folded_stacks_under_the_processs_root(self):
        for name in STACK_FILES:
            stacks = self.stacks(name)
            roots = {frames[0] for frames, _ in stacks}
            # The process's comm ("dotnet": the app runs as `dotnet APP.dll`),
            # one root for all its threads' events.
            self.assertEqual(len(roots), 1, (name, roots))
            self.assertTrue(next(iter(roots)).startswith("dotnet"), (name, roots))
            # Sorted as folded_stacks.out is: by the stack's text.
            lines = [";".join(frames) for frames, _ in stacks]
            self.assertEqual(lines, sorted(lines), name)

    def test_allocated_bytes_by_site_and_type(self):
        stacks = self.stacks("alloc_stacks.out")
        sites = self.truth["alloc"]["sites"]
        large, small = sites["AllocSiteLarge"], sites["AllocSiteSmall"]
        # The app's own design: three times the bytes.
        self.assertAlmostEqual(large["bytes"] / small["bytes"], 3.0, delta=0.01, msg=sites)
        self.assert_share(weight_under(stacks, "AllocSiteLarge"),
                          weight_under(stacks, "AllocSiteSmall"),
                          large["bytes"], small["bytes"], "AllocSiteLarge's share of the bytes")
        self.assert_leaf_types(stacks, "AllocSiteLarge", large["type"], "alloc")
        self.assert_leaf_types(stacks, "AllocSiteSmall", small["type"], "alloc")
        # What the process allocated over the run, the app's own count
        # (GC.GetTotalAllocatedBytes): the collection's window holds it and
        # an idle app around it.
        total = sum(w for _, w in stacks)
        process = self.truth["process_bytes"]
        self.assertLessEqual(abs(total - process) / process, BYTES_TOLERANCE,
                             f"profile {total} bytes, app {process}")

    def test_go_tool_pprof_reads_the_three_profiles(self):
        """-format pprof: each profile as go tool pprof shows it, its sample
        type named, the same split as the folded files."""
        home = t.TempDir()
        self.addCleanup(home.cleanup)
        sites = self.truth["alloc"]["sites"]
        large = sites["AllocSiteLarge"]["bytes"] / (sites["AllocSiteLarge"]["bytes"] +
                                                     sites["AllocSiteSmall"]["bytes"])
        for name, index, leaf, share in (
                ("alloc.pb.gz", "alloc_space", sites["AllocSiteLarge"]["type"], large),
                ("alloc.pb.gz", "alloc_objects", sites["AllocSiteLarge"]["type"], None),
                ("lock_wait.pb.gz", "delay", None, None),
                ("lock_wait.pb.gz", "contentions", None, None),
                ("exceptions.pb.gz", "exceptions", None, None)):
            out = go_tool_pprof(["-sample_index=" + index, "-top",
                                 os.path.join(self.run_dir, name)], home.path)
            self.assertIn(f"Type: {index}", out, out)
            if leaf is None:
                continue
            # The leaf type's flat share, as pprof prints it: "N unit P% ...".
            row = next((l for l in out.splitlines() if l.rstrip().endswith(leaf)), None)
            self.assertIsNotNone(row, f"{leaf} not in pprof's -top:\n{out}")
            if share is not None:
                got = float(row.split()[1].rstrip("%")) / 100
                self.assertLessEqual(abs(got - share), SHARE_POINTS, row)

    def test_lock_wait_by_site(self):
        stacks = self.stacks("lock_wait_stacks.out")
        waits = self.truth["lock_wait"]
        a, b = waits["WaitSiteA"]["us"], waits["WaitSiteB"]["us"]
        got_a, got_b = weight_under(stacks, "WaitSiteA"), weight_under(stacks, "WaitSiteB")
        self.assert_share(got_a, got_b, a, b, "WaitSiteA's share of the lock waits")
        # Microseconds, not another unit: the runtime's wait starts after the
        # lock's spinning, the app's Stopwatch before it.
        self.assertLessEqual(abs((got_a + got_b) - (a + b)) / (a + b), 0.25,
                             f"profile {got_a + got_b} us, app {a + b:.0f} us")

    def test_throws_by_site_and_type(self):
        stacks = self.stacks("exception_stacks.out")
        throws = self.truth["throws"]
        a, b = throws["ThrowSiteA"], throws["ThrowSiteB"]
        got_a, got_b = weight_under(stacks, "ThrowSiteA"), weight_under(stacks, "ThrowSiteB")
        self.assert_share(got_a, got_b, a["count"], b["count"], "ThrowSiteA's share of the throws")
        self.assert_leaf_types(stacks, "ThrowSiteA", a["type"], "exceptions")
        self.assert_leaf_types(stacks, "ThrowSiteB", b["type"], "exceptions")
        # One sample per throw, and the app threw only in its measured run.
        for site, got in (("ThrowSiteA", got_a), ("ThrowSiteB", got_b)):
            true = throws[site]["count"]
            self.assertLessEqual(abs(got - true) / true, SHARE_POINTS, f"{site}: {got} vs {true}")
        by_type = collections.Counter()
        for frames, weight in stacks:
            by_type[frames[-1]] += weight
        for site in (a, b):
            typed = sum(w for leaf, w in by_type.items() if site["type"] in leaf)
            self.assertLessEqual(abs(typed - site["count"]) / site["count"], SHARE_POINTS,
                                 f"{site['type']}: {typed}; leaves {by_type.most_common(5)}")

    def traceevent(self):
        path = os.path.join(self.run_dir, "dotnet", f"{self.pid}.nettrace")
        read = subprocess.run([dn.DOTNET, os.path.join(self.reader_dir, "TraceEventStacks.dll"),
                               path], capture_output=True, text=True, timeout=300)
        self.assertEqual(read.returncode, 0, read.stderr[-3000:])
        return json.loads(read.stdout)

    def test_traceevent_agrees_on_the_top_allocating_types_and_stacks(self):
        stacks = self.stacks("alloc_stacks.out")
        by_leaf = collections.Counter()
        for frames, weight in stacks:
            by_leaf[frames[-1]] += weight
        theirs = self.traceevent()["alloc"]
        their_types = theirs["types"]
        self.assertGreaterEqual(len(their_types), 2, theirs)
        sites = self.truth["alloc"]["sites"]
        known = [sites["AllocSiteLarge"]["type"], sites["AllocSiteSmall"]["type"]]
        # The same two types on top, in the same order: the app's.
        self.assertEqual([e["type"] for e in their_types[:2]], known,
                         [(e["type"], e["bytes"]) for e in their_types[:5]])
        ours = [leaf for leaf, _ in by_leaf.most_common(2)]
        self.assertEqual(len(ours), 2, by_leaf)
        for leaf, type_name in zip(ours, known):
            self.assertIn(type_name, leaf, by_leaf.most_common(5))
        # Their bytes: the same events' amounts.
        for entry in their_types[:2]:
            mine = sum(w for leaf, w in by_leaf.items() if entry["type"] in leaf)
            self.assertLessEqual(abs(mine - entry["bytes"]) / entry["bytes"], 0.02,
                                 f"{entry['type']}: profcpu {mine}, TraceEvent {entry['bytes']}")
        # Their stacks: each type's heaviest stack has the app's site as its
        # leaf frame, and the share under the sites is profcpu's.
        for entry, site in zip(their_types[:2], ("AllocSiteLarge", "AllocSiteSmall")):
            leaf = entry["stacks"][0]["frames"][0]
            self.assertIn(site, leaf, entry["stacks"][0])
        def theirs_under(site):
            return sum(w for e in their_types for f, w in e["inclusive"].items()
                       if site in f and "AllocSite" in f)
        self.assert_share(weight_under(stacks, "AllocSiteLarge"),
                          weight_under(stacks, "AllocSiteSmall"),
                          theirs_under("AllocSiteLarge"), theirs_under("AllocSiteSmall"),
                          "AllocSiteLarge's share, profcpu against TraceEvent")

    def test_archive_alone_gives_the_same_files(self):
        elsewhere = t.TempDir()
        self.addCleanup(elsewhere.cleanup)
        shutil.copy(os.path.join(self.run_dir, "prof.tar.gz"), elsewhere.path)
        empty = os.path.join(elsewhere.path, "no-debug-files")
        os.makedirs(empty)
        result = subprocess.run([t.PROFCPU, "postprocess", "-dir", elsewhere.path],
                                env=t.env_without_local_debug_files(empty), capture_output=True,
                                text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in STACK_FILES:
            here = os.path.join(self.run_dir, name)
            there = os.path.join(elsewhere.path, name)
            self.assertTrue(os.path.exists(there), f"postprocess of the archive wrote no {name}: "
                            f"{sorted(os.listdir(elsewhere.path))}\n{result.stderr}")
            self.assertEqual(t.read_bytes(there), t.read_bytes(here), name)


class DotnetEventStacksRecordTest(unittest.TestCase):
    """profcpu record: the session starts with the app, so the profiles hold
    its warm-up too, which runs the same phases: the same shares."""

    def record(self, extra):
        app_dir = dn.build_project("AllocLockApp")
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        result = subprocess.run([t.PROFCPU, "record", "-out", tmp.path, "-freq", "49", *extra,
                                 "--", dn.DOTNET, os.path.join(app_dir, "AllocLockApp.dll"),
                                 "all", "3"],
                                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=180)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.strip().splitlines()
        truth = json.loads(next(line for line in lines if line.startswith("{")))
        return lines[-1], truth

    def test_record_gives_the_three_profiles(self):
        run_dir, truth = self.record([])
        for name in STACK_FILES:
            self.assertTrue(os.path.exists(os.path.join(run_dir, name)), name)
        alloc = read_folded(os.path.join(run_dir, "alloc_stacks.out"))
        sites = truth["alloc"]["sites"]
        got = share(weight_under(alloc, "AllocSiteLarge"), weight_under(alloc, "AllocSiteSmall"))
        true = share(sites["AllocSiteLarge"]["bytes"], sites["AllocSiteSmall"]["bytes"])
        self.assertLessEqual(abs(got - true), SHARE_POINTS, (got, true))
        throws = read_folded(os.path.join(run_dir, "exception_stacks.out"))
        got = share(weight_under(throws, "ThrowSiteA"), weight_under(throws, "ThrowSiteB"))
        true = share(truth["throws"]["ThrowSiteA"]["count"], truth["throws"]["ThrowSiteB"]["count"])
        self.assertLessEqual(abs(got - true), SHARE_POINTS, (got, true))

    def test_off_writes_no_event_stacks(self):
        run_dir, _ = self.record(["-dotnet-events", "off"])
        for name in STACK_FILES:
            self.assertFalse(os.path.exists(os.path.join(run_dir, name)), name)


if __name__ == "__main__":
    unittest.main()
