"""The path profcpu exists for, whole, with the consumers users feed: the
example ASP.NET Core service in its own container (containers/examples/,
built here from the SDK), load from wrk, the sidecar through
scripts/profile-container with its defaults, prof.tar.gz alone postprocessed
in another folder (the "laptop", this machine, with its own debug files), and
the outputs read as FlameScope and stackcollapse-perf.pl read them. Checked
against what the service measured itself."""

import collections
import json
import os
import re
import shutil
import subprocess
import time
import unittest

import dotnet_service as svc
import dotnet_testing as dn
import profcpu_testing as t
import test_sidecar

HELPER = os.path.join(dn.SOURCE_ROOT, "scripts", "profile-container")
SECONDS = 20
# Load before the collection: a service profiled in use has its hot methods
# at their final tier (tier-0 and OSR code come and go in the first seconds).
WARM_UP_SECONDS = 10
# Outermost frames that mean a stack reached its thread's start: glibc's
# thread and process entry points (named from this machine's libc6-dbg).
THREAD_ROOTS = {"clone3", "clone", "__clone", "start_thread", "_start",
                "__libc_start_main", "__libc_start_call_main"}


def folded(run_dir):
    """folded_stacks.out as [(frames root first, count)], the comm dropped."""
    stacks = []
    with open(os.path.join(run_dir, "folded_stacks.out"), encoding="utf-8") as f:
        for line in f:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            stacks.append((stack.split(";")[1:], int(count)))
    return stacks


def perf_script_records(run_dir):
    """Records as FlameScope and stackcollapse-perf.pl count them: every
    header line (not a comment, not a frame, not blank) is one sample."""
    records, libc_frames, libc_unknown = 0, 0, 0
    with open(os.path.join(run_dir, "perf_script.out"), encoding="utf-8",
              errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            if line.startswith("\t"):
                if line.rstrip().endswith("/libc.so.6)"):
                    libc_frames += 1
                    libc_unknown += "[unknown]" in line
                continue
            records += 1
    return records, libc_frames, libc_unknown


def libc_build_id():
    out = subprocess.run(["readelf", "-n", "/lib/x86_64-linux-gnu/libc.so.6"],
                         capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


class SidecarPathTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The laptop's own debug files: libc's, by build-id, from libc6-dbg.
        build_id = libc_build_id()
        debug = f"/usr/lib/debug/.build-id/{build_id[:2]}/{build_id[2:]}.debug"
        if not os.path.exists(debug):
            raise AssertionError(f"{debug} is missing: scripts/setup.sh installs libc6-dbg")
        base_image, cls.sidecar_image = test_sidecar.build_images()
        cls.image = svc.build_image(base_image)
        cls.tmp = t.TempDir()
        cls.service = svc.ServiceContainer(cls.image, f"profcpu-path-{os.getpid()}")
        try:
            cls.collect()
        finally:
            cls.service.stop()

    @classmethod
    def collect(cls):
        load = svc.Load(cls.service, WARM_UP_SECONDS + SECONDS + 60, cls.tmp.path)
        try:
            time.sleep(WARM_UP_SECONDS)
            before = cls.service.stats()
            # The helper as the docs show it, with its defaults but the length.
            result = subprocess.run([HELPER, "-c", cls.service.name, "-duration", str(SECONDS),
                                     "-out", os.path.join(cls.tmp.path, "sidecar")],
                                    capture_output=True, text=True, timeout=600,
                                    env={**os.environ, "PROFCPU_IMAGE": cls.sidecar_image})
            after = cls.service.stats()
        finally:
            load.stop()
        if result.returncode != 0:
            raise AssertionError(f"profile-container failed:\n{result.stderr}")
        cls.truth = svc.delta(before, after)
        sidecar_run = result.stdout.strip()
        # The laptop: prof.tar.gz alone, the container gone.
        cls.run_dir = os.path.join(cls.tmp.path, "laptop")
        os.makedirs(cls.run_dir)
        shutil.copy(os.path.join(sidecar_run, "prof.tar.gz"), cls.run_dir)
        post = subprocess.run([t.PROFCPU, "postprocess", "-dir", cls.run_dir],
                              capture_output=True, text=True, timeout=600)
        if post.returncode != 0:
            raise AssertionError(f"postprocess failed:\n{post.stderr}")
        with open(os.path.join(cls.run_dir, "metadata.json"), encoding="utf-8") as f:
            cls.meta = json.load(f)
        cls.stacks = folded(cls.run_dir)
        print(f"\nservice's own figures over the window: {cls.truth}")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_handler_shares_match_the_service_own_cpu_time(self):
        profile = collections.Counter()
        for frames, count in self.stacks:
            for endpoint in svc.ENDPOINTS:
                method = "Handle" + endpoint.capitalize()
                if any(method in frame for frame in frames):
                    profile[endpoint] += count
        measured = {e: self.truth[f"{e}_cpu_ns"] for e in svc.ENDPOINTS}
        for endpoint in svc.ENDPOINTS:
            share = 100 * profile[endpoint] / sum(profile.values())
            truth = 100 * measured[endpoint] / sum(measured.values())
            print(f"{endpoint}: {share:.1f}% of handler samples, {truth:.1f}% of handler CPU")
            self.assertLess(abs(share - truth), 5, (endpoint, profile, measured))

    def test_stacks_reach_their_thread_root(self):
        total = sum(count for _, count in self.stacks)
        cut = collections.Counter()
        for frames, count in self.stacks:
            if not frames or frames[0] not in THREAD_ROOTS:
                cut[frames[0] if frames else "(empty)"] += count
        rooted = 100 * (total - sum(cut.values())) / total
        print(f"rooted: {rooted:.1f}% of {total} samples; cut short at {cut.most_common(5)}")
        self.assertGreaterEqual(rooted, 95, cut.most_common(10))

    def test_perf_script_counts_as_flamescope_counts(self):
        records, _, _ = perf_script_records(self.run_dir)
        self.assertEqual(records, self.meta["samples"]["total"])

    def test_libc_named_from_this_machine_debug_files(self):
        _, libc_frames, libc_unknown = perf_script_records(self.run_dir)
        self.assertGreater(libc_frames, 0)
        print(f"libc: {libc_frames} frames, {libc_unknown} unnamed")
        self.assertLess(libc_unknown, 0.02 * libc_frames)

    def test_runtime_event_counts_match_the_service(self):
        events = self.meta["dotnet_events"][0]
        window = events["window_ms"] / 1000
        for name, ours, theirs in (("GCs", events["gc"]["count"], self.truth["gc_count"]),
                                   ("exceptions", events["exceptions"]["count"],
                                    self.truth["exceptions"])):
            # Rates: the service's window spans the helper's start and end.
            rate, truth = ours / window, theirs / self.truth["seconds"]
            print(f"{name}: {rate:.1f}/s in the profile, {truth:.1f}/s by the service")
            self.assertLess(abs(rate - truth), 0.15 * truth, name)

    def test_event_profiles_name_the_service_work(self):
        """The .NET event profiles (issue 28), rebuilt on the laptop from the
        archive alone: the service's allocations under the handlers that make
        them, and every throw the service counted, under RegexWork."""
        alloc = event_stacks(self.run_dir, "alloc_stacks.out")
        total = sum(w for _, w in alloc)
        by_work = {work: sum(w for frames, w in alloc if any(work in f for f in frames))
                   for work in ("JsonWork", "HashWork", "RegexWork")}
        print(f"allocated: {total} bytes; by handler work: {by_work}")
        for work in ("JsonWork", "HashWork"):
            self.assertGreater(by_work[work], 0.05 * total, work)
        hash_types = collections.Counter()
        for frames, w in alloc:
            if any("HashWork" in f for f in frames):
                hash_types[frames[-1]] += w
        self.assertEqual(hash_types.most_common(1)[0][0], "System.Byte[]", hash_types)
        throws = event_stacks(self.run_dir, "exception_stacks.out")
        counted = self.meta["dotnet_events"][0]["exceptions"]["count"]
        self.assertEqual(sum(w for _, w in throws), counted)
        under_regex = sum(w for frames, w in throws
                          if frames[-1] == "System.InvalidOperationException"
                          and any("RegexWork" in f for f in frames))
        print(f"throws: {counted}, {under_regex} InvalidOperationException under RegexWork")
        self.assertGreaterEqual(under_regex, 0.95 * counted)


def event_stacks(run_dir, name):
    """A .NET event profile's folded file as [(frames, weight)], the process's
    root dropped."""
    stacks = []
    with open(os.path.join(run_dir, name), encoding="utf-8") as f:
        for line in f:
            stack, weight = line.rstrip("\n").rsplit(" ", 1)
            stacks.append((stack.split(";")[1:], int(weight)))
    return stacks


if __name__ == "__main__":
    unittest.main()
