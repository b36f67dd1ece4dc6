"""collect and record save each .NET process's runtime events over EventPipe
(dotnet/PID.nettrace, collector/dotnet/dotnet_events_session.h) and
summarize them in metadata.json "dotnet_events" and the closing line
(dotnet_events_summary.h). The app (tests/dotnet/EventsApp, built at test
time) induces a GC and throws a TestException RATE times a second while two
threads fight over a lock; the counts over the session's window must match
those rates within 15%."""

import os
import re
import shutil
import subprocess
import tarfile
import unittest

import dotnet_testing as dn
import profcpu_testing as t

RATE = 20
SECONDS = 4
TOLERANCE = 0.15
APP_TOTALS = re.compile(r"gcs (\d+) exceptions (\d+) jitted (\d+) contentions (\d+) "
                        r"seconds ([0-9.]+)")


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
        self.assertIsNotNone(events, "metadata.json has no dotnet_events")
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
        self.assert_saved_and_archived(run_dir, events["pid"])
        with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
            log = f.read()
        self.assertIn("started EventPipe session", log)
        self.assertRegex(log, r"\d+ GCs, \d+ ms paused \([0-9.]+%\), [\d,]+ exceptions "
                              r"\(all EventsApp\.TestException\)")
        self.assert_archive_alone_gives_the_same(run_dir)

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
        os.truncate(path, size * 2 // 3)
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


if __name__ == "__main__":
    unittest.main()
