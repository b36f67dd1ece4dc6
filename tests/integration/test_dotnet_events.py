"""collect and record save each .NET process's runtime events over EventPipe
(dotnet/PID.nettrace, collector/dotnet/dotnet_events_session.h) and
summarize them in metadata.json "dotnet_events" and the closing line
(fold/dotnet_events_summary.h). The app (tests/dotnet/EventsApp, built at test
time) induces a GC and throws a TestException RATE times a second while two
threads fight over a lock; the counts over the session's window must match
those rates within 15%."""

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import unittest

import dotnet_testing as dn
import profcpu_testing as t

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata",
                        "output_stability", "dotnet_events")
RATE = 20
SECONDS = 4
TOLERANCE = 0.15
# A process that looks like a .NET runtime to profcpu (a diagnostics socket
# in its /tmp) but answers every command with the HRESULT it is given, and
# burns CPU meanwhile: a runtime that refuses EventPipe (0x80004005) or is
# too old to know CollectTracing2 and 3 (0x80131385, unknown command).
FAKE_RUNTIME = r"""
import os, socket, struct, sys, threading
hresult = int(sys.argv[1], 16)
# As the runtime: the key is the process's start time (/proc/PID/stat field 22).
with open("/proc/self/stat") as f:
    start_time = f.read().rsplit(")", 1)[1].split()[19]
path = f"/tmp/dotnet-diagnostic-{os.getpid()}-{start_time}-socket"
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen(8)
def answer():
    while True:
        conn, _ = server.accept()
        header = conn.recv(20)
        size = struct.unpack_from("<H", header, 14)[0] if len(header) == 20 else 20
        left = size - len(header)
        while left > 0:
            chunk = conn.recv(left)
            if not chunk:
                break
            left -= len(chunk)
        conn.sendall(b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 24, 0xFF, 0xFF, 0)
                     + struct.pack("<I", hresult))
        conn.close()
threading.Thread(target=answer, daemon=True).start()
print("ready", flush=True)
try:
    while True:
        sum(i * i for i in range(10000))
finally:
    os.unlink(path)
"""
# A sample's header line: "comm PID/TID [CPU] ...".
SAMPLE_PID_TID = re.compile(r"^\S.*?\s+(\d+)/(\d+)\s+\[\d+\]")
APP_TOTALS = re.compile(r"gcs (\d+) exceptions (\d+) jitted (\d+) contentions (\d+) "
                        r"seconds ([0-9.]+)")


def samples_by_thread(run_dir, pid):
    """{tid: samples} of `pid` in perf_script.out."""
    tids = collections.Counter()
    with open(os.path.join(run_dir, "perf_script.out"), encoding="utf-8", errors="replace") as f:
        for line in f:
            found = SAMPLE_PID_TID.match(line)
            if found and int(found.group(1)) == pid:
                tids[int(found.group(2))] += 1
    return tids


def assert_script_holds_the_samples_alone(test, run_dir):
    """perf_script.out as FlameScope (and speedscope, stackcollapse-perf.pl)
    counts it, every record one sample, and the PerfView export as
    TraceEvent's CPU stacks weigh it: the samples metadata.json counts, and
    no runtime event among them."""
    from test_perfview import perfview_process, perfview_read, perf_data_txt
    meta = t.read_metadata(run_dir)
    samples = meta["samples"]["total"]
    records = t.parse_like_flamescope(os.path.join(run_dir, "perf_script.out"))
    test.assertEqual(len(records), samples)
    test.assertFalse([r for r in records if any(".NET " in name for name, _ in r[2])])
    pid = meta["dotnet_events"][0]["pid"]
    text, archive = perf_data_txt(run_dir)
    test.assertNotIn("dotnet:", text)
    process = perfview_process(perfview_read(archive), pid)
    test.assertEqual(process["Samples"], sum(samples_by_thread(run_dir, pid).values()))
    test.assertFalse([name for name in process["Exclusive"] if "dotnet-events" in name],
                     process["Exclusive"])


class RecordedDotnetRunTest(unittest.TestCase):
    """The committed .NET recording (tests/testdata/output_stability/
    dotnet_events: 237 samples, 39 GC pauses, 39 exceptions) postprocessed
    with -format perfview: no app to run."""

    def test_exports_hold_the_samples_alone(self):
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        run_dir = os.path.join(tmp.path, "run")
        shutil.copytree(RECORDED, run_dir)
        t.run_profcpu(["postprocess", "-dir", run_dir, "-format", "perfview"])
        assert_script_holds_the_samples_alone(self, run_dir)
        # The runtime's events are on the page's lane, each with the thread
        # the runtime reported it from (never 0: every nettrace event has one).
        meta = t.read_page_meta(os.path.join(run_dir, "profile.html"))
        lane = collections.Counter(e["kind"] for e in meta["events"])
        self.assertEqual(lane, {"gc": 39, "exception": 39})
        self.assertFalse([e for e in meta["events"] if not e["tid"] > 0], meta["events"][:3])


class DotnetEventsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.app_dir = dn.build_project("EventsApp")

    def setUp(self):
        self.tmp = t.TempDir()
        self.addCleanup(self.tmp.cleanup)

    def app_command(self, seconds):
        return [dn.DOTNET, os.path.join(self.app_dir, "EventsApp.dll"), str(seconds), str(RATE)]

    def assert_near(self, actual, expected, what):
        self.assertGreater(expected, 0, what)
        self.assertLessEqual(abs(actual - expected) / expected, TOLERANCE,
                             f"{what}: {actual}, expected {expected:.1f} +-15%")

    def only_events(self, run_dir):
        events = t.read_metadata(run_dir).get("dotnet_events")
        if events is None:
            with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
                self.fail(f"metadata.json has no dotnet_events; profcpu.log:\n{f.read()}")
        self.assertEqual(len(events), 1, events)
        return events[0]

    def assert_rates(self, events, contention_rate=None):
        """GCs and exceptions at RATE a second over the session's window."""
        window_s = events["window_ms"] / 1000
        self.assertGreater(window_s, 1.0, events)
        what = f"over the session's {window_s:.2f} s: {events}"
        self.assert_near(events["gc"]["count"], RATE * window_s, "GCs " + what)
        self.assert_near(events["gc"]["induced"], RATE * window_s, "induced GCs " + what)
        self.assert_near(events["exceptions"]["count"], RATE * window_s, "exceptions " + what)
        by_type = events["exceptions"]["by_type"]
        self.assert_near(by_type.get("EventsApp.TestException", 0), RATE * window_s,
                         "TestExceptions " + what)
        self.assertGreater(events["gc"]["pause_ms_total"], 0, what)
        self.assertLessEqual(events["gc"]["pause_ms_total"], events["window_ms"], what)
        self.assertGreater(events["gc"]["pause_ms_max"], 0, what)
        self.assertGreater(events["contention"]["count"], 0, what)
        if contention_rate is not None:
            self.assert_near(events["contention"]["count"], contention_rate * window_s,
                             "contentions " + what)
        self.assertGreater(events["threadpool"]["worker_threads_started"], 0, what)

    def assert_saved_and_archived(self, run_dir, pid):
        name = f"dotnet/{pid}.nettrace"
        self.assertTrue(os.path.getsize(os.path.join(run_dir, name)) > 0)
        with tarfile.open(os.path.join(run_dir, "prof.tar.gz")) as archive:
            self.assertIn(name, archive.getnames())
        self.assertIn(name, t.read_metadata(run_dir)["files"])

    def assert_archive_alone_gives_the_same(self, run_dir):
        elsewhere = os.path.join(self.tmp.path, "laptop")
        os.makedirs(elsewhere)
        shutil.copy(os.path.join(run_dir, "prof.tar.gz"), elsewhere)
        result = t.run_profcpu(["postprocess", "-dir", elsewhere])
        self.assertEqual(t.read_metadata(elsewhere)["dotnet_events"],
                         t.read_metadata(run_dir)["dotnet_events"])
        self.assertIn(" GCs, ", result.stderr)

    def test_record_summarizes_the_apps_events(self):
        run_dir, out = t.record(self.tmp.path, ["-freq", "49"], self.app_command(SECONDS))
        totals = APP_TOTALS.search(out)
        self.assertIsNotNone(totals, out)
        contention_rate = int(totals.group(4)) / float(totals.group(5))
        events = self.only_events(run_dir)
        self.assert_rates(events, contention_rate)
        # Verbose JIT events: every method the app compiled, its own dynamic
        # methods among them, with the time it took.
        self.assertGreaterEqual(events["jit"]["methods"], int(totals.group(3)), events)
        self.assertGreater(events["jit"]["ms_total"], 0, events)
        self.assert_saved_and_archived(run_dir, events["pid"])
        with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
            log = f.read()
        self.assertIn("started EventPipe session", log)
        self.assertRegex(log, r"\d+ GCs, \d+ ms paused \([0-9.]+%\), [\d,]+ exceptions "
                              r"\(all EventsApp\.TestException\)")
        self.assert_archive_alone_gives_the_same(run_dir)

    def test_gc_pauses_and_exceptions_are_on_the_pages_time_axis_only(self):
        """profile.html's events lane holds each GC pause and each burst of
        exceptions at its time, naming the thread the runtime reported it
        from; perf_script.out and the PerfView export hold the CPU samples
        alone (their readers count every record as a sample)."""
        run_dir, _ = t.record(self.tmp.path, ["-freq", "199", "-format", "perfview"],
                              self.app_command(3))
        events = self.only_events(run_dir)
        pid = events["pid"]
        gc_count, thrown = events["gc"]["count"], events["exceptions"]["count"]
        self.assertGreater(gc_count, 20, events)
        assert_script_holds_the_samples_alone(self, run_dir)

        meta = t.read_page_meta(os.path.join(run_dir, "profile.html"))
        lane = collections.Counter(e["kind"] for e in meta["events"])
        # The app throws every 50 ms, the main thread and its Thrower thread
        # in turn: each throw is a burst of its own.
        self.assertEqual(lane["gc"], gc_count, meta["events"][:5])
        self.assertEqual(lane["exception"], thrown, meta["events"][:5])
        for e in meta["events"]:
            self.assertTrue(0 <= e["t"] <= meta["duration_s"], e)
            self.assertEqual(e["pid"], pid, e)
        paused_s = sum(e["d"] for e in meta["events"] if e["kind"] == "gc")
        self.assertAlmostEqual(paused_s * 1000, events["gc"]["pause_ms_total"], delta=0.5)
        # Each throw names its thread, as TraceEvent reads the same stream:
        # the main thread (tid = pid, profcpu and the app share a pid
        # namespace here) and the Thrower, half each.
        read = subprocess.run([dn.DOTNET, os.path.join(self.app_dir, "EventsApp.dll"), "read",
                               os.path.join(run_dir, "dotnet", f"{pid}.nettrace")],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(read.returncode, 0, read.stderr)
        by_traceevent = {int(tid): n for tid, n in
                         json.loads(read.stdout)["exception_threads"].items()}
        by_lane = collections.Counter(e["tid"] for e in meta["events"] if e["kind"] == "exception")
        self.assertEqual(dict(by_lane), by_traceevent)
        self.assertEqual(len(by_lane), 2, by_lane)
        self.assertIn(pid, by_lane)
        thrower = next(tid for tid in by_lane if tid != pid)
        self.assertLessEqual(abs(by_lane[pid] - by_lane[thrower]), 2, by_lane)
        self.assert_lane_names_a_gc(os.path.join(run_dir, "profile.html"))

    def assert_lane_names_a_gc(self, page):
        """In headless Chromium: the events lane is shown, and hovering a GC
        pause's box names it."""
        import test_profile_page as pages
        node = pages.require_browser_tools()
        hover = """(() => {
          const meta = JSON.parse(document.getElementById('profcpu-meta').textContent);
          const gc = meta.events.find(e => e.kind === 'gc');
          const lane = document.getElementById('events'), heat = document.getElementById('heatmap');
          const a = window.profcpu.heatmapCellCenter(0, 0), b = window.profcpu.heatmapCellCenter(1, 0);
          const width = b.x - a.x, left = a.x - width / 2 - heat.getBoundingClientRect().left;
          const box = lane.getBoundingClientRect();
          lane.dispatchEvent(new MouseEvent('mousemove', {bubbles: true,
              clientX: box.left + left + gc.t * width + 1, clientY: box.top + box.height / 2}));
          const tip = document.getElementById('tooltip');
          return {shown: !lane.hidden && box.height > 0, tip: tip.hidden ? '' : tip.textContent,
                  label: gc.label};
        })()"""
        shot = os.path.join(self.tmp.path, "lane.png")
        spec = os.path.join(self.tmp.path, "lane.json")
        with open(spec, "w") as f:
            json.dump({"path": page, "timeout_ms": 30000,
                       "steps": [{"op": "eval", "expr": hover},
                                 {"op": "screenshot", "path": shot}]}, f)
        proc = subprocess.run([node, pages.DRIVER, spec], capture_output=True, text=True,
                              timeout=150)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        result = json.loads(proc.stdout)
        self.assertEqual(result["state"], "ready", result)
        self.assertEqual(result["console_errors"] + result["page_errors"], [], result)
        lane = result["steps"][0]
        self.assertTrue(lane["shown"], f"{lane}; screenshot {shot}")
        self.assertIn("gc: " + lane["label"], lane["tip"], f"{lane}; screenshot {shot}")

    def test_collect_pid_summarizes_the_apps_events(self):
        app = subprocess.Popen(self.app_command(60), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        def stop():
            t.stop(app)
            app.stdout.close()
            app.stderr.close()
        self.addCleanup(stop)
        dn.wait_ready(app)
        run_dir = t.collect(app.pid, self.tmp.path, duration=SECONDS, freq=49)
        events = self.only_events(run_dir)
        self.assertEqual(events["pid"], app.pid)
        self.assert_rates(events)
        self.assert_saved_and_archived(run_dir, app.pid)

    def test_a_damaged_file_is_summarized_as_far_as_it_reads(self):
        run_dir, _ = t.record(self.tmp.path, ["-freq", "49"], self.app_command(2))
        pid = self.only_events(run_dir)["pid"]
        copy = os.path.join(self.tmp.path, "damaged")
        shutil.copytree(run_dir, copy)
        os.unlink(os.path.join(copy, "prof.tar.gz"))
        path = os.path.join(copy, "dotnet", f"{pid}.nettrace")
        size = os.path.getsize(path)
        # Early enough to cut some GCs (the rundown at its end lists every
        # method: a large part of the file).
        os.truncate(path, size // 4)
        result = t.run_profcpu(["postprocess", "-dir", copy])
        self.assertRegex(result.stderr, rf"dotnet/{pid}\.nettrace is damaged or cut short.*"
                                        r"offset \d+")
        events = self.only_events(copy)
        self.assertIn("read_error", events)
        self.assertGreater(events["gc"]["count"], 0)
        self.assertLess(events["gc"]["count"], self.only_events(run_dir)["gc"]["count"])

    def test_off_writes_no_events(self):
        run_dir, _ = t.record(self.tmp.path, ["-freq", "49", "-dotnet-events", "off"],
                              self.app_command(1))
        self.assertFalse(os.path.exists(os.path.join(run_dir, "dotnet")))
        self.assertNotIn("dotnet_events", t.read_metadata(run_dir))
        with tarfile.open(os.path.join(run_dir, "prof.tar.gz")) as archive:
            self.assertFalse([n for n in archive.getnames() if n.startswith("dotnet/")])

    def test_a_native_target_gets_no_events_and_no_error(self):
        run_dir, _ = t.record(self.tmp.path, ["-freq", "49"], [t.fixture("two_phase"), "0.5"])
        metadata = t.read_metadata(run_dir)
        self.assertNotIn("dotnet_events", metadata)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "dotnet")))
        self.assertFalse([w for w in metadata["warnings"] if ".NET" in w], metadata["warnings"])

    def collect_from_a_fake_runtime(self, hresult):
        fake = subprocess.Popen([sys.executable, "-c", FAKE_RUNTIME, hresult],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        def stop():
            t.stop(fake)
            fake.stdout.close()
            fake.stderr.close()
            for name in os.listdir("/tmp"):
                if name.startswith(f"dotnet-diagnostic-{fake.pid}-"):
                    os.unlink(os.path.join("/tmp", name))
        self.addCleanup(stop)
        self.assertEqual(fake.stdout.readline().strip(), "ready")
        run_dir = t.collect(fake.pid, self.tmp.path, duration=2, freq=99,
                            extra=["-perfmap", "off"])
        metadata = t.read_metadata(run_dir)
        self.assertNotIn("dotnet_events", metadata)
        self.assertFalse(os.path.exists(os.path.join(run_dir, "dotnet")))
        # The CPU profile is intact.
        self.assertGreater(metadata["samples"]["total"], 50, metadata["samples"])
        lines = [w for w in metadata["warnings"] if "no .NET runtime events" in w]
        self.assertEqual(len(lines), 1, metadata["warnings"])
        self.assertIn("the CPU profile is not affected", lines[0])
        return lines[0]

    def test_a_refusing_runtime_gets_one_log_line_and_the_profile_goes_on(self):
        line = self.collect_from_a_fake_runtime("80004005")
        self.assertIn("0x80004005", line)

    def test_a_runtime_too_old_for_eventpipe_says_so(self):
        line = self.collect_from_a_fake_runtime("80131385")
        self.assertIn(".NET 5 or later", line)


# A frame as the flame graph names it: no offset, no argument list (the
# folded stacks' rule; the events spell argument types without assemblies).
OFFSET = re.compile(r"\+0x[0-9a-f]+$")
# A method as profcpu names it: "Ns.Type::Method(args)[Tier] [Assembly]".
METHOD = re.compile(r"^[^\s\[]\S*::.* \[[^\]\[]+\](\+0x[0-9a-f]+)?$")


def jit_frames_by_address(run_dir):
    """perf_script.out's samples as {address: name} of their JIT frames (a
    native address may unfold into several inlined frames, or none, depending
    on the files at hand: addresses line the two namings up)."""
    samples, current = [], None
    with open(os.path.join(run_dir, "perf_script.out"), encoding="utf-8",
              errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if current is not None:
                    samples.append(current)
                current = None
            elif dn.HEADER.match(line) and current is None:
                current = {}
            elif (frame := dn.FRAME.match(line)) and current is not None:
                if frame.group(3).startswith("/tmp/perf-"):
                    current[frame.group(1)] = frame.group(2)
    if current is not None:
        samples.append(current)
    return samples


def flame_graph_name(name):
    name = OFFSET.sub("", name)
    open_paren, close_paren = name.find("("), name.rfind(")")
    return name[:open_paren] + name[close_paren + 1:] if open_paren >= 0 else name


class DotnetEventsBudgetTest(unittest.TestCase):
    """A busy runtime's stream, with the cap lowered so the budget
    (collector/dotnet/event_budget.h) must thin it within seconds: the bulk
    events (GCAllocationTick first) are dropped, never the names; the file
    stays within the cap, whole (the rundown at its end) and readable by
    TraceEvent; metadata.json says what was dropped and from when, again
    after postprocess of the archive alone."""

    CAP = 2 << 20

    def test_a_lowered_cap_thins_the_bulk_events_and_says_so(self):
        app_dir = dn.build_project("ThroughputApp")
        events_dir = dn.build_project("EventsApp")
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        app = subprocess.Popen([dn.DOTNET, os.path.join(app_dir, "ThroughputApp.dll"), "2"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(app.stdout.readline().strip(), "ready")
            env = dict(os.environ, PROFCPU_DOTNET_EVENTS_MAX_BYTES=str(self.CAP))
            result = subprocess.run([t.PROFCPU, "collect", "-pid", str(app.pid), "-duration", "12",
                                     "-out", tmp.path], capture_output=True, text=True,
                                    timeout=180, env=env)
            self.assertEqual(result.returncode, 0, result.stderr)
            run_dir = result.stdout.strip().splitlines()[-1]
        finally:
            app.stdin.close()
            app.wait(timeout=30)
        meta = t.read_metadata(run_dir)
        runtime = next(r for r in meta["dotnet_runtimes"] if r["pid"] == app.pid)
        events = runtime["events"]
        self.assertTrue(events["cut"], runtime)
        kinds = {d["kind"]: d for d in events["dropped"]}
        self.assertIn("GCAllocationTick", kinds, events)
        for name in ("MethodLoadVerbose", "GCStart", "GCSuspendEEBegin", "GCRestartEEEnd",
                     "ModuleLoad", "all"):
            self.assertNotIn(name, kinds, events)
        start = meta["collection"]["start_monotonic_ns"]
        end = start + int(meta["collection"]["duration_seconds"] * 1e9)
        for d in events["dropped"]:
            self.assertGreater(d["events"], 0, d)
            self.assertTrue(start <= d["first_monotonic_ns"] <= end, (d, start, end))
        path = os.path.join(run_dir, "dotnet", f"{app.pid}.nettrace")
        self.assertLessEqual(os.path.getsize(path), self.CAP)
        self.assertEqual(events["bytes_saved"], os.path.getsize(path))
        summary = next(e for e in meta["dotnet_events"] if e["pid"] == app.pid)
        self.assertNotIn("read_error", summary)
        self.assertGreater(summary["gc"]["count"], 10, summary)
        # The stream is whole (its end tag) and the rundown made it: the
        # names of the code jitted before the session.
        with open(path, "rb") as f:
            data = f.read()
        self.assertEqual(data[-1:], b"\x01")
        self.assertIn("Microsoft-Windows-DotNETRuntimeRundown".encode("utf-16-le"), data)
        # Another reader (TraceEvent) reads the rewritten stream whole.
        read = subprocess.run([dn.DOTNET, os.path.join(events_dir, "EventsApp.dll"), "read", path],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(read.returncode, 0, read.stderr)
        self.assertTrue(json.loads(read.stdout), read.stdout)

        elsewhere = os.path.join(tmp.path, "laptop")
        os.makedirs(elsewhere)
        shutil.copy(os.path.join(run_dir, "prof.tar.gz"), elsewhere)
        t.run_profcpu(["postprocess", "-dir", elsewhere])
        self.assertEqual(t.read_metadata(elsewhere)["dotnet_runtimes"], meta["dotnet_runtimes"])


class DotnetEventNamesTest(unittest.TestCase):
    """Managed frames named from the runtime's method events (MethodLoadVerbose
    during the session, the rundown's MethodDCEndVerbose at its end) when the
    target wrote no perf map: symbolize/managed_code_events.h."""

    def setUp(self):
        self.tmp = t.TempDir()
        self.addCleanup(self.tmp.cleanup)

    def test_perfmap_off_names_the_hot_method_and_writes_nothing_in_the_target(self):
        app = dn.start_app(60)
        def stop():
            t.stop(app)
            app.stdout.close()
            app.stderr.close()
        self.addCleanup(stop)
        run_dir = t.collect(app.pid, self.tmp.path, duration=4, freq=99,
                            extra=["-perfmap", "off"])
        samples = [frames for pid, frames in dn.read_samples(run_dir) if pid == app.pid]
        self.assertGreater(len(samples), 100)
        hot = [f for f in samples if any(dn.HOT_METHOD in name for name, _ in f)]
        # The worker thread spends its time in FindPrimeNumber: about one core
        # of the app's, measured 35-60% of its samples.
        self.assertGreater(len(hot) / len(samples), 0.2, (len(hot), len(samples)))
        with open(os.path.join(run_dir, "folded_stacks.out"), encoding="utf-8") as f:
            self.assertRegex(f.read(), r"PrimeWorker::FindPrimeNumber\[\w+\] \[PrimeApp\]")
        # Nothing written in the target: no perf map, no jitdump, no copies.
        self.assertFalse([n for n in os.listdir("/tmp")
                          if n in (f"perf-{app.pid}.map", f"jit-{app.pid}.dump")])
        self.assertFalse(os.path.exists(os.path.join(run_dir, "jit")))
        with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
            self.assertRegex(f.read(), rf"JIT symbols from dotnet/{app.pid}\.nettrace "
                                       r"\(\d+ methods loaded during the session, [1-9]\d* before")

    def test_event_names_match_the_perf_map_names(self):
        """The same recording named twice: from the perf map (default), and
        from the events alone (a copy without jit/ and symbols.bin)."""
        out = dn.build_app()
        run_dir, _ = t.record(self.tmp.path, ["-freq", "199"],
                              [dn.DOTNET, os.path.join(out, "PrimeApp.dll"), "5",
                               str(dn.free_port())])
        events_only = os.path.join(self.tmp.path, "events-only")
        os.makedirs(events_only)
        for name in os.listdir(run_dir):
            if name not in ("jit", "symbols.bin", "prof.tar.gz"):
                source = os.path.join(run_dir, name)
                copy = shutil.copytree if os.path.isdir(source) else shutil.copy
                copy(source, os.path.join(events_only, name))
        t.run_profcpu(["postprocess", "-dir", events_only])
        by_map = jit_frames_by_address(run_dir)
        by_events = jit_frames_by_address(events_only)
        self.assertEqual(len(by_map), len(by_events))
        managed = same = 0
        differ = collections.Counter()
        for map_frames, event_frames in zip(by_map, by_events):
            # Methods only: the perf map also names the runtime's stubs
            # ("stub<...>"), which have no method events.
            wanted = {address: flame_graph_name(name) for address, name in map_frames.items()
                      if METHOD.match(name)}
            if not wanted:
                continue
            managed += 1
            got = {a: flame_graph_name(event_frames.get(a, "[unknown]")) for a in wanted}
            if got == wanted:
                same += 1
            else:
                differ.update((name, got[a]) for a, name in wanted.items() if got[a] != name)
        self.assertGreater(managed, 300)
        self.assertGreaterEqual(same / managed, 0.99,
                                f"{same}/{managed}; differing: {differ.most_common(5)}")


if __name__ == "__main__":
    unittest.main()
