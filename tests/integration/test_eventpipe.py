"""An EventPipe session on a live .NET app (collector/dotnet/eventpipe_session.h)
and the nettrace reader on what it saved (nettrace/reader.h), through the
eventpipe_record test tool. The app (tests/dotnet/EventsApp, built at test
time) induces a GC and throws and catches an exception RATE times a second;
the counts the reader finds over a few seconds must match, and match what
TraceEvent's own reader (the same app's "read" mode) finds in the same file."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import dotnet_testing as dn
import profcpu_testing as t

RATE = 20
SECONDS = 3
BUILD_DIR = os.path.dirname(os.path.dirname(t.FIXTURES))
RECORD = os.path.join(BUILD_DIR, "collector", "eventpipe_record")


def run_record(*args, timeout=60):
    if not os.path.exists(RECORD):
        raise AssertionError(f"{RECORD} is missing: build the eventpipe_record target")
    result = subprocess.run([RECORD, *map(str, args)], capture_output=True, text=True,
                            timeout=timeout)
    return result.returncode, result.stdout, result.stderr


def parse_summary(stdout):
    """eventpipe_record's lines as {"events": {(provider, id): count}, name: value}."""
    summary = {"events": {}, "exceptions": {}}
    for line in stdout.splitlines():
        words = line.split(" ")
        if words[0] == "event":
            key = (words[1], int(words[2]))
            summary["events"][key] = summary["events"].get(key, 0) + int(words[4])
        elif words[0] == "exception":
            summary["exceptions"][words[1]] = int(words[2])
        elif len(words) == 2 and words[1].isdigit():
            summary[words[0]] = int(words[1])
        else:
            summary[words[0]] = " ".join(words[1:])
    return summary


class EventPipeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.app_dir = dn.build_project("EventsApp")

    def start_app(self, seconds):
        proc = subprocess.Popen([dn.DOTNET, os.path.join(self.app_dir, "EventsApp.dll"),
                                 str(seconds), str(RATE)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=self.app_dir)
        def stop():
            proc.kill()
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        self.addCleanup(stop)
        dn.wait_ready(proc)
        return proc

    def scratch(self):
        work = tempfile.mkdtemp(prefix="profcpu-eventpipe-", dir="/var/tmp")
        self.addCleanup(shutil.rmtree, work, True)
        return work

    def test_session_counts_match_the_app_and_traceevent(self):
        proc = self.start_app(SECONDS + 10)
        work = self.scratch()
        path = os.path.join(work, f"{proc.pid}.nettrace")
        rc, out, err = run_record("record", proc.pid, SECONDS, path)
        self.assertEqual(rc, 0, out + err)
        s = parse_summary(out)
        self.assertIn("end", s, out)
        self.assertIn("command 0x04", s["session"], "CollectTracing3 on .NET 10")
        self.assertEqual(s["decode_errors"], 0, out)
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), b"Nettrace")
        self.assertTrue(s["trace"].startswith("version 4 pointer_size 8 frequency 1000000000 "
                                              f"pid {proc.pid}"), s["trace"])

        # RATE a second over SECONDS, give or take the session's start and stop.
        expected = RATE * SECONDS
        low, high = expected * 0.6, expected * 1.4 + RATE
        for name, count in (("gc_start_induced", s["gc_start_induced"]),
                            ("TestException", s["exceptions"].get("EventsApp.TestException", 0))):
            self.assertTrue(low <= count <= high, f"{name}: {count}, expected ~{expected}\n{out}")
        # Every GC's pause pair and end came too.
        for name in ("gc_end", "gc_suspend_ee_begin", "gc_restart_ee_end"):
            self.assertGreaterEqual(s[name], s["gc_start_induced"], out)
        self.assertGreater(s["contention_stop"], 0, out)
        # The app starves the thread pool every second: threads are added.
        self.assertGreater(s["threadpool_starvation"], 0, out)
        self.assertGreater(s["threadpool_thread_start"], 0, out)
        self.assertGreater(float(s["span_seconds"]), SECONDS * 0.7, out)

        # TraceEvent reads the same file and finds the same.
        result = subprocess.run([dn.DOTNET, os.path.join(self.app_dir, "EventsApp.dll"), "read",
                                 path], capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        theirs = json.loads(result.stdout)
        self.assertEqual(theirs["events_lost"], 0)
        self.assertEqual(theirs["gc_start_induced"], s["gc_start_induced"])
        self.assertEqual(theirs["exceptions"], s["exceptions"])
        self.assertEqual(theirs["contention_stop"], s["contention_stop"])
        self.assertEqual(theirs["threadpool_thread_start"], s["threadpool_thread_start"])
        self.assertEqual(theirs["threadpool_adjustment"], s["threadpool_adjustment"])
        runtime = "Microsoft-Windows-DotNETRuntime"
        for event_id in (1, 2, 3, 4, 8, 9, 50, 55, 80, 81, 91):
            self.assertEqual(theirs["events"].get(f"{runtime}/{event_id}", 0),
                             s["events"].get((runtime, event_id), 0), f"event {event_id}")

        # The app kept running; the session is gone.
        self.assertIsNone(proc.poll())

    def test_verbose_session_names_the_methods_jitted(self):
        proc = self.start_app(SECONDS + 10)
        path = os.path.join(self.scratch(), f"{proc.pid}.nettrace")
        rc, out, err = run_record("record", proc.pid, 2, path, 5)
        self.assertEqual(rc, 0, out + err)
        s = parse_summary(out)
        self.assertEqual(s["decode_errors"], 0, out)
        expected = RATE * 2
        for name in ("dynamic_methods_loaded", "dynamic_methods_jitting"):
            self.assertTrue(expected * 0.6 <= s[name] <= expected * 1.4 + RATE,
                            f"{name}: {s[name]}, expected ~{expected}\n{out}")
        # MethodLoadVerbose: the DynamicMethod's class, name, code and signature.
        self.assertRegex(s["method_example"], r"^dynamicClass EventsAppDynamic\d+ 1 int32 +\(\)$")
        result = subprocess.run([dn.DOTNET, os.path.join(self.app_dir, "EventsApp.dll"), "read",
                                 path], capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        theirs = json.loads(result.stdout)
        self.assertEqual(theirs["dynamic_methods_loaded"], s["dynamic_methods_loaded"])
        self.assertEqual(theirs["dynamic_methods_jitting"], s["dynamic_methods_jitting"])

    def test_a_process_that_exits_ends_the_stream(self):
        proc = self.start_app(1.5)
        work = self.scratch()
        path = os.path.join(work, f"{proc.pid}.nettrace")
        started = time.monotonic()
        rc, out, err = run_record("record", proc.pid, 10, path)
        # The runtime ends the session at shutdown, flushed and with the
        # end-of-stream tag: no StopTracing, no waiting out the 10 s.
        self.assertEqual(rc, 0, out + err)
        self.assertLess(time.monotonic() - started, 8)
        s = parse_summary(out)
        self.assertIn("end", s, out)
        self.assertGreater(s["gc_start_induced"], 0, out)
        self.assertEqual(proc.wait(timeout=30), 0)

    def test_not_dotnet_is_a_clear_error(self):
        sleeper = subprocess.Popen(["sleep", "30"])
        self.addCleanup(lambda: (sleeper.kill(), sleeper.wait()))
        rc, out, err = run_record("record", sleeper.pid, 1, "/dev/null")
        self.assertEqual(rc, 1)
        self.assertIn("no .NET diagnostics socket", out)

    def test_garbage_is_a_clear_error(self):
        with tempfile.NamedTemporaryFile(suffix=".nettrace") as f:
            f.write(b"Nettrace\x14\x00\x00\x00!FastSerialization.1\x05\x05\x01")
            f.flush()
            rc, out, err = run_record("read", f.name)
        self.assertEqual(rc, 1)
        self.assertIn("error nettrace offset 35: the stream ends inside an object type", out)


if __name__ == "__main__":
    unittest.main()
