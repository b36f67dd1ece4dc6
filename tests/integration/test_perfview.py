"""-format perfview as PerfView reads it: TraceEvent's own reader (the NuGet
package, in tests/dotnet/PerfViewReader, built at test time) on the
NAME.trace.zip of a -pid profile. PerfView weighs a sample by the time to
the next sample on its CPU, not by its period (fold/perfview_gaps.h), and
reads perf-map frames its own way (FrameDialect in
fold/perf_script_format.h); the shares it shows must be folded_stacks.out's."""

import collections
import json
import os
import shutil
import subprocess
import time
import unittest
import zipfile

import dotnet_testing as dn
import profcpu_testing as t

# PerfView's share of a function may differ from folded_stacks.out's by this
# much (percentage points); only rounding separates them.
TOLERANCE = 1.0


def perfview_read(path):
    """{process: {Samples, Metric, Exclusive, Inclusive}} as PerfView's CPU
    Stacks view has them; frame names "module!function"."""
    reader = os.path.join(dn.build_project("PerfViewReader"), "PerfViewReader.dll")
    result = subprocess.run([dn.DOTNET, reader, path], capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        raise AssertionError(f"PerfViewReader {path} failed:\n{result.stdout}\n{result.stderr}")
    return json.loads(result.stdout)


def perfview_process(processes, pid):
    """The entry of "Process NAME (PID)"."""
    found = [metrics for name, metrics in processes.items() if name.endswith(f" ({pid})")]
    if len(found) != 1:
        raise AssertionError(f"no single process {pid} in PerfView's view: {list(processes)}")
    return found[0]


def function_name(perfview_frame):
    """"module!function" -> "function", as folded_stacks.out names frames."""
    return perfview_frame.split("!", 1)[1] if "!" in perfview_frame else perfview_frame


def perfview_exclusive_shares(process):
    shares = collections.Counter()
    for frame, metric in process["Exclusive"].items():
        shares[function_name(frame)] += 100 * metric / process["Metric"]
    return shares


def folded_exclusive_shares(folded):
    total = sum(folded.values())
    shares = collections.Counter()
    for stack, count in folded.items():
        shares[stack[-1]] += 100 * count / total
    return shares


def perf_data_txt(run_dir):
    """The export's perf script text and the zip's name."""
    name = os.path.basename(run_dir.rstrip("/"))
    archive = os.path.join(run_dir, f"{name}.trace.zip")
    with zipfile.ZipFile(archive) as z:
        return z.read(f"{name}.trace/perf.data.txt").decode(), archive


class PerfViewSharesTest(unittest.TestCase):
    """burst_sleeper's bursty stretch (mostly kernel time) is a sixth of its
    CPU time but most of its wall time."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        cls.proc = t.start([t.fixture("burst_sleeper"), "30"])
        try:
            time.sleep(0.5)
            cls.run_dir = t.collect(cls.proc.pid, cls.tmp.path, duration=5, freq=199,
                                    extra=["-format", "perfview"])
        finally:
            t.stop(cls.proc)
        cls.folded = folded_exclusive_shares(
            t.read_folded(os.path.join(cls.run_dir, "folded_stacks.out")))
        cls.top = [name for name, share in cls.folded.most_common() if share >= 3]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def shares_in_perfview(self, path):
        return perfview_exclusive_shares(perfview_process(perfview_read(path), self.proc.pid))

    def describe(self, perfview):
        return ", ".join(f"{name}: folded {self.folded[name]:.1f}% PerfView {perfview[name]:.1f}%"
                         for name in self.top)

    def test_perfview_shows_the_folded_shares(self):
        _, archive = perf_data_txt(self.run_dir)
        perfview = self.shares_in_perfview(archive)
        self.assertIn("steady_compute", self.top, self.describe(perfview))
        self.assertGreaterEqual(len(self.top), 2, self.describe(perfview))
        for name in self.top:
            self.assertAlmostEqual(perfview[name], self.folded[name], delta=TOLERANCE,
                                   msg=self.describe(perfview))

    def test_perf_script_out_would_mislead_perfview(self):
        """The fixture shows the fault the export corrects: perf_script.out
        as it is (what the export was) gives PerfView other shares."""
        plain = os.path.join(self.tmp.path, "plain.perf.data.txt")
        shutil.copy(os.path.join(self.run_dir, "perf_script.out"), plain)
        perfview = self.shares_in_perfview(plain)
        # Measured: steady_compute 80.7% folded, 72.3% in PerfView; the
        # kernel's read_zero 9.2% and 14.9%.
        worst = max(abs(perfview[name] - self.folded[name]) for name in self.top)
        self.assertGreater(worst, 3 * TOLERANCE, self.describe(perfview))

    def test_export_keeps_perf_script_out_samples(self):
        text, _ = perf_data_txt(self.run_dir)
        headers = [line for line in text.splitlines() if line[:1] not in ("", "#", "\t")]
        with open(os.path.join(self.run_dir, "perf_script.out"), encoding="utf-8") as f:
            plain = [line for line in f.read().splitlines() if line[:1] not in ("", "#", "\t")]
        self.assertEqual([h for h in headers if not h.startswith("unprofiled ")], plain)


class PerfViewNodeTest(unittest.TestCase):
    def test_one_name_per_js_function(self):
        tmp = t.TempDir()
        proc = t.start_node_with_perf_map(self, tmp.path)
        perf_map = f"/tmp/perf-{proc.pid}.map"
        try:
            run_dir = t.collect(proc.pid, tmp.path, duration=3, freq=199,
                                extra=["-format", "perfview"])
            text, archive = perf_data_txt(run_dir)
            frames = [line for line in text.splitlines() if line.startswith("\t")]
            with_offsets = [f for f in frames if "+0x" in f]
            self.assertFalse(with_offsets, f"{len(with_offsets)} frames with offsets in the "
                                           f"export, e.g. {with_offsets[:3]}")
            process = perfview_process(perfview_read(archive), proc.pid)
            perfview = {function_name(f) for f in process["Inclusive"] if "fibonacciRecursive" in f}
            folded = {frame for stack in t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
                      for frame in stack if "fibonacciRecursive" in frame}
            # V8's tiers (JS:~, JS:^, JS:*) are names of their own in both.
            self.assertTrue(folded)
            self.assertEqual(perfview, folded)
        finally:
            t.stop(proc)
            if os.path.exists(perf_map):
                os.unlink(perf_map)
            tmp.cleanup()


if __name__ == "__main__":
    unittest.main()
