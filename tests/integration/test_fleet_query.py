"""`profcpu query` against two real ClickHouse shards (scripts/clickhouse-shards.sh):
known rows go in (stacks with known counts on both shards, the same stack ids on
both, several pods and namespaces, two hours), and the outputs say exactly
what went in: the frames and counts of the folded stacks and flame graph,
-where narrowing to one pod, -by pod writing a file per pod, [other] holding
what -max-stacks leaves out, -diff's before and after, pprof that go tool
pprof reads, profile.html's time axis (its embedded data decoded) and the
page in headless Chromium."""

import base64
import collections
import gzip
import json
import os
import re
import shutil
import subprocess
import time
import unittest
import zlib

import profcpu_testing as t
from clickhouse_shards import ClickHouseShards
from test_profile_page import PageTestCase

HOUR = 3600
BASE = (int(time.time()) // HOUR) * HOUR - 3 * HOUR  # two whole hours well in the past
HOUR_A = BASE + 600        # 10 min into the first hour
HOUR_B = BASE + HOUR + 600  # 10 min into the second

LABELS = ["node", "container", "cgroup", "pod_uid", "pod", "namespace", "comm", "exe", "runtime",
          "build_id"]


def stable_id(*fields):
    """The contract's ids: FNV-1a 64 over the fields, separated by a 0 byte."""
    h = 0xcbf29ce484222325
    for i, field in enumerate(fields):
        data = field if isinstance(field, bytes) else field.encode()
        for byte in (b"\0" if i else b"") + data:
            h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def frame(name, module):
    return (stable_id(name, module, ""), name, module)


# Stacks root first. parse and compress are on both shards, with the same ids.
STACKS = {
    "parse": [frame("main", "api"), frame("handle", "api"), frame("parse", "libparse.so")],
    "compress": [frame("main", "api"), frame("handle", "api"), frame("deflate_slow", "libz.so.1")],
    "idle": [frame("main", "api"), frame("do_idle", "[kernel.kallsyms]")],
    "scan": [frame("cron_main", "cron"), frame("scan", "cron")],
}
STACK_IDS = {name: stable_id(*[f[0].to_bytes(8, "little") for f in frames])
             for name, frames in STACKS.items()}
COMM = {"parse": "api", "compress": "api", "idle": "api", "scan": "cron"}
FOLDED = {"parse": "api;main;handle;parse", "compress": "api;main;handle;deflate_slow",
          "idle": "api;main;do_idle", "scan": "cron;cron_main;scan"}

# (shard, time, pod, namespace, stack, count): node n0 -> shard 0, n1 -> shard 1.
ROWS = [
    (0, HOUR_A, "api-1", "shop", "parse", 300), (0, HOUR_A, "api-1", "shop", "compress", 100),
    (0, HOUR_A + 1, "api-2", "shop", "parse", 100), (0, HOUR_A + 2, "api-2", "shop", "idle", 50),
    (1, HOUR_A, "api-3", "shop", "parse", 200), (1, HOUR_A + 5, "api-3", "shop", "compress", 50),
    (1, HOUR_A, "cron-1", "batch", "scan", 200),
    (0, HOUR_B, "api-1", "shop", "parse", 100), (0, HOUR_B + 30, "api-1", "shop", "compress", 300),
    (1, HOUR_B, "api-3", "shop", "compress", 200), (1, HOUR_B, "cron-1", "batch", "scan", 100),
]

# In the third hour, after every range but one test's: 5 and 40 minutes in.
LATE = BASE + 2 * HOUR
LATE_ROWS = [(0, LATE + 300, "api-1", "shop", "parse", 40),
             (1, LATE + 2400, "api-3", "shop", "compress", 25)]


def expected(rows):
    counts = collections.Counter()
    for _, _, _, _, stack, count in rows:
        counts[FOLDED[stack]] += count
    return dict(counts)


def sql_string(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def rfc3339(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def read_folded(path):
    stacks = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            stack, _, counts = line.rstrip("\n").partition(" ")
            values = [int(c) for c in counts.split(" ")]
            stacks[stack] = values[0] if len(values) == 1 else tuple(values)
    return stacks


def page_data(path):
    """profile.html's META and its samples as (time_us, weight), decoded as
    docs/profile-page.md lays the data out."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    meta = json.loads(re.search(r'id="profcpu-meta">(.*?)</script>', page, re.S).group(1))
    element = re.search(r'id="profcpu-data" data-encoding="(\w+)"[^>]*>(.*?)</script>', page, re.S)
    data = base64.b64decode(element.group(2))
    if element.group(1) == "deflate":
        data = zlib.decompress(data)
    pos = 0

    def varint():
        nonlocal pos
        value, shift = 0, 0
        while True:
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    assert data[:4] == b"PCPG", data[:4]
    pos = 4
    varint()  # version
    names = varint()
    for _ in range(names):
        length = varint()  # (not `pos += varint()`: that adds to the old pos)
        pos += length
    pos += names * 7  # colours, cool colours, flags
    for _ in range(varint() - 1):
        varint(), varint()
    for _ in range(varint()):
        varint(), varint(), varint()
    samples = varint()
    flags = varint()
    times, now = [], 0
    for _ in range(samples):
        z = varint()
        now += (z >> 1) ^ -(z & 1)
        times.append(now)
    for _ in range(samples * 2):
        varint()
    weights = [varint() for _ in range(samples)] if flags & 1 else [1] * samples
    return meta, list(zip(times, weights))


class FleetQueryTest(PageTestCase):
    """PageTestCase: the browser checks' driver and temp folder (kept, with
    screenshots, when a test fails)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.shards = ClickHouseShards(cls.tmp.path, n=2)
        try:
            cls.shards.start()
            cls.fill()
        except BaseException:
            cls.shards.stop()
            cls.tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.shards.stop()
        super().tearDownClass()

    @classmethod
    def fill(cls):
        t.run_profcpu(["fleet", "init", "-store", cls.shards.store_flag])
        for shard in range(2):
            used = {stack for s, *_, stack, _ in ROWS + LATE_ROWS if s == shard}
            frames = {f for stack in used for f in STACKS[stack]}
            cls.shards.query(shard, "INSERT INTO profcpu.frames_local (id, name, module) VALUES " +
                             ", ".join(f"({i}, {sql_string(n)}, {sql_string(m)})"
                                       for i, n, m in sorted(frames)))
            cls.shards.query(shard, "INSERT INTO profcpu.stacks_local VALUES " + ", ".join(
                f"({STACK_IDS[s]}, [{','.join(str(f[0]) for f in STACKS[s])}])" for s in sorted(used)))
            values = []
            for s, when, pod, namespace, stack, count in ROWS + LATE_ROWS:
                if s != shard:
                    continue
                labels = {k: "" for k in LABELS}
                labels.update(node=f"n{shard}", pod=pod, namespace=namespace, comm=COMM[stack],
                              container=f"c-{pod}")
                values.append(f"(toDateTime({when}), " +
                              ", ".join(sql_string(labels[k]) for k in LABELS) +
                              f", {STACK_IDS[stack]}, {count}, 1)")
            cls.shards.query(shard, "INSERT INTO profcpu.samples_local (time, " +
                             ", ".join(LABELS) + ", stack_id, count, window) VALUES " +
                             ", ".join(values))

    def query(self, *extra, out="q.folded", check=True):
        path = os.path.join(self.tmp.path, out)
        result = t.run_profcpu(["query", "-store", self.shards.store_flag,
                                "-from", rfc3339(BASE), "-to", rfc3339(BASE + 2 * HOUR),
                                *extra, "-o", path], check=check)
        return path, result

    def test_folded_is_exactly_what_went_in(self):
        path, result = self.query(out="all.folded")
        self.assertEqual(read_folded(path), expected(ROWS))
        self.assertIn("1700 samples", result.stderr)

    def test_flame_graph_shares(self):
        path, _ = self.query(out="all.svg")
        with open(path, encoding="utf-8") as f:
            svg = f.read()
        # 700 of 1700 samples in parse (41.18%), 650 in deflate_slow; handle holds both.
        self.assertIn("<title>parse (700 samples, 41.18%)</title>", svg)
        self.assertIn("<title>deflate_slow (650 samples, 38.24%)</title>", svg)
        self.assertIn("<title>handle (1,350 samples, 79.41%)</title>", svg)
        self.assertIn("<title>scan (300 samples, 17.65%)</title>", svg)

    def test_where_narrows_to_one_pod(self):
        path, _ = self.query("-where", "pod=api-1")
        self.assertEqual(read_folded(path), expected([r for r in ROWS if r[2] == "api-1"]))
        path, _ = self.query("-where", "namespace=shop,pod=~api-[12]")
        self.assertEqual(read_folded(path), expected([r for r in ROWS if r[2] in ("api-1", "api-2")]))
        path, _ = self.query("-where", "namespace!=shop")
        self.assertEqual(read_folded(path), {FOLDED["scan"]: 300})
        # A quote in a value is a value, not SQL.
        path, _ = self.query("-where", "pod=api-1' OR 1=1 --")
        self.assertEqual(read_folded(path), {})

    def test_by_pod_one_file_per_pod(self):
        path, result = self.query("-by", "pod", out="pods.folded")
        for pod in ("api-1", "api-2", "api-3", "cron-1"):
            per_pod = os.path.join(self.tmp.path, f"pods.{pod}.folded")
            self.assertEqual(read_folded(per_pod), expected([r for r in ROWS if r[2] == pod]), pod)
        self.assertFalse(os.path.exists(path))
        # -top 2: the two pods with most samples (api-1 800, api-3 450).
        self.query("-by", "pod", "-top", "2", out="top.svg")
        written = sorted(f for f in os.listdir(self.tmp.path) if f.startswith("top."))
        self.assertEqual(written, ["top.api-1.svg", "top.api-3.svg"])

    def test_long_range_reads_the_hourly_rollup(self):
        # Three days: longer than raw rows are read for (2 days), so the
        # roll-up answers, which the store's materialized view filled from
        # the same rows: the same stacks and counts.
        path, result = self.query("-from", rfc3339(BASE - 3 * 24 * HOUR), out="long.folded")
        self.assertIn("read the hourly roll-up", result.stderr)
        self.assertEqual(read_folded(path), expected(ROWS))
        # Its page counts per hour at least.
        path, _ = self.query("-from", rfc3339(BASE - 3 * 24 * HOUR), out="long.html")
        meta, samples = page_data(path)
        self.assertGreaterEqual(meta["time_resolution_s"], HOUR)
        self.assertEqual(sum(w for _, w in samples), 1700)

    def test_partial_hours_from_raw_rows(self):
        # From 20 minutes into the first hour to 30 into the third: the
        # whole second hour is read from the roll-up, whose first-hour row
        # also holds the rows 10 minutes in (before the range: out), and the
        # ends from raw rows (the third hour's at 5 minutes in, at 40 out).
        start, end = BASE + 1200, LATE + 1800
        rows = [r for r in ROWS + LATE_ROWS if start <= r[1] < end]
        for out in ("partial.folded", "partial.html"):
            path, result = self.query("-from", rfc3339(start), "-to", rfc3339(end), out=out)
            total = sum(r[5] for r in rows)
            self.assertIn(f"{total} samples", result.stderr)
        self.assertEqual(read_folded(os.path.join(self.tmp.path, "partial.folded")), expected(rows))
        _, samples = page_data(os.path.join(self.tmp.path, "partial.html"))
        self.assertEqual(sum(w for _, w in samples), total)

    def test_max_stacks_counts_the_rest_as_other(self):
        path, result = self.query("-max-stacks", "2", out="two.folded")
        self.assertEqual(read_folded(path), {FOLDED["parse"]: 700, FOLDED["compress"]: 650,
                                             "[other]": 350})
        self.assertIn("350 in [other]", result.stderr)

    def test_diff_ranges(self):
        path, _ = self.query("-from", rfc3339(BASE + HOUR), "-diff",
                             f"{rfc3339(BASE)}..{rfc3339(BASE + HOUR)}", out="diff.folded")
        before = expected([r for r in ROWS if r[1] < BASE + HOUR])
        after = expected([r for r in ROWS if r[1] >= BASE + HOUR])
        self.assertEqual(read_folded(path), {s: (before.get(s, 0), after.get(s, 0))
                                             for s in set(before) | set(after)})
        svg, _ = self.query("-from", rfc3339(BASE + HOUR), "-diff",
                            f"{rfc3339(BASE)}..{rfc3339(BASE + HOUR)}", out="diff.svg")
        with open(svg, encoding="utf-8") as f:
            text = f.read()
        # deflate_slow grew from 150 to 500 samples: drawn red, with both counts.
        self.assertRegex(text, r"<title>deflate_slow \(500 samples, [\d.]+%; \+[\d.]+%\)</title>")

    def test_diff_where(self):
        path, _ = self.query("-where", "pod=api-3", "-diff-where", "pod=api-1", out="dw.folded")
        before = expected([r for r in ROWS if r[2] == "api-1"])
        after = expected([r for r in ROWS if r[2] == "api-3"])
        self.assertEqual(read_folded(path), {s: (before.get(s, 0), after.get(s, 0))
                                             for s in set(before) | set(after)})
        _, result = self.query("-diff-where", "pod=api-1", out="dw.html", check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("write .svg", result.stderr)

    def test_pprof(self):
        path, _ = self.query(out="all.pb.gz")
        with open(path, "rb") as f:
            self.assertEqual(f.read(2), b"\x1f\x8b")
        go = shutil.which("go")
        self.assertIsNotNone(go, "go is required to read the pprof export (scripts/setup.sh)")
        home = os.path.join(self.tmp.path, "gohome")
        os.makedirs(home, exist_ok=True)
        env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "cache"), GOFLAGS="",
                   GOPATH=os.path.join(home, "gopath"), PPROF_TMPDIR=home)
        top = subprocess.run([go, "tool", "pprof", "-top", "-symbolize=none", path],
                             capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(top.returncode, 0, top.stderr)
        flat = {m.group(2): int(m.group(1))
                for m in re.finditer(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(\S+)",
                                     top.stdout, re.M)}
        self.assertEqual(flat.get("parse"), 700, top.stdout)
        self.assertEqual(flat.get("deflate_slow"), 650, top.stdout)
        self.assertEqual(flat.get("scan"), 300, top.stdout)

    def test_page_time_axis(self):
        path, _ = self.query(out="all.html")
        meta, samples = page_data(path)
        self.assertEqual(int(meta["start_realtime_ns"]), BASE * 10**9)
        self.assertEqual(meta["duration_s"], 2 * HOUR)
        step = meta["time_resolution_s"]
        self.assertLessEqual(2 * HOUR / step, 2000)
        self.assertEqual(meta["total_weight"], 1700)
        # Each sample at its bucket's start, its weight the bucket's count.
        by_time = collections.Counter()
        for time_us, weight in samples:
            by_time[time_us // 10**6] += weight
        want = collections.Counter()
        for _, when, _, _, _, count in ROWS:
            want[(when - BASE) // step * step] += count
        self.assertEqual(dict(by_time), dict(want))

    def test_page_diff_view(self):
        path, _ = self.query("-from", rfc3339(BASE + HOUR), "-diff",
                             f"{rfc3339(BASE)}..{rfc3339(BASE + HOUR)}", out="diff.html")
        meta, _ = page_data(path)
        self.assertEqual(meta["view"], f"from={HOUR}&to={2 * HOUR}&bfrom=0&bto={HOUR}")
        self.assertEqual(meta["total_weight"], 1700)

    def test_page_in_the_browser(self):
        path, _ = self.query(out="browser.html")
        result = self.drive(path, [
            {"op": "rows", "n": 4},
            {"op": "eval", "expr": "window.profcpu.rowsPerSecond"},
            {"op": "selection"},
        ])
        self.assertClean(result)
        rows, rows_per_second, selection = result["steps"]
        self.assertEqual([(r["name"], r["self"]) for r in rows],
                         [("parse", "41.18"), ("deflate_slow", "38.24"), ("scan", "17.65"),
                          ("do_idle", "2.94")])
        self.assertEqual(rows_per_second, 1)  # counts per bucket: one row per column
        self.assertEqual(selection, {"from": 0, "to": 2 * HOUR})
        # A click on the first hour's busy cell selects its bucket (60 s: two
        # hours in at most 250,000 / 2,001 kept stacks = 124 columns) and the
        # table shows that bucket only: the first hour's rows (1,000 samples).
        meta, _ = page_data(path)
        step = meta["time_resolution_s"]
        self.assertEqual(step, 60)
        result = self.drive(path, [
            {"op": "click", "second": HOUR_A - BASE + 1, "row": 0},
            {"op": "selection"}, {"op": "rows", "n": 4},
        ])
        self.assertClean(result)
        _, selection, rows = result["steps"]
        self.assertEqual(selection, {"from": HOUR_A - BASE, "to": HOUR_A - BASE + step})
        self.assertEqual([(r["name"], r["self"]) for r in rows],
                         [("parse", "60.00"), ("scan", "20.00"), ("deflate_slow", "15.00"),
                          ("do_idle", "5.00")])

    def test_diff_page_in_the_browser(self):
        path, _ = self.query("-from", rfc3339(BASE + HOUR), "-diff",
                             f"{rfc3339(BASE)}..{rfc3339(BASE + HOUR)}", out="browser-diff.html")
        result = self.drive(path, [
            {"op": "rows", "n": 2},
            {"op": "eval", "expr": "document.getElementById('baseline-text').textContent"},
            {"op": "eval", "expr": "document.getElementById('diff-legend').hidden"},
        ])
        self.assertClean(result)
        rows, baseline, legend_hidden = result["steps"]
        # The second hour's shares (deflate_slow 500 of 700), against the first.
        self.assertEqual((rows[0]["name"], rows[0]["self"]), ("deflate_slow", "71.43"))
        self.assertIn("Baseline: 0", baseline)
        self.assertFalse(legend_hidden)

    def test_shard_down_fails_with_its_url(self):
        bad = "http://127.0.0.1:1"
        result = t.run_profcpu(["query", "-store", f"{self.shards.urls[0]},{bad}", "-from", "-1h",
                                "-o", os.path.join(self.tmp.path, "x.svg")], check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn(bad, result.stderr)


if __name__ == "__main__":
    unittest.main()
