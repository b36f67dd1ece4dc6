"""profile.html in a real browser: headless Chromium (Debian's chromium)
driven by puppeteer-core (tests/browser/page_driver.js). A recording of
two_phase (phase_one for the first half of its run, phase_two for the
second) checks the page loads with no console error and no request, that a
time range in the URL puts the right function on top of the table, that a
click on the heatmap selects, and that search counts what it matches. A
recording of a .NET app checks the switch to its exceptions and lock waits
by stack. Crafted
perf script text through `profcpu html` checks that hostile function names
stay text. A test that cannot find node, chromium or puppeteer-core fails
with the install hint: it never skips."""

import json
import os
import re
import shutil
import subprocess
import sys
import unittest
from urllib.parse import parse_qs

import dotnet_testing as dn
import profcpu_testing as t

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "browser", "page_driver.js")
BROWSER_MODULES = os.environ.get("PROFCPU_BROWSER_MODULES", "/opt/profcpu-browser/node_modules")
INSTALL_HINT = ("bash scripts/setup.sh installs them (chromium from Debian, puppeteer-core "
                "into /opt/profcpu-browser)")

PHASE_SECONDS = 2.5
FREQ = 999
MARGIN = 0.3  # seconds kept clear of each phase's ends


def require_browser_tools():
    """Fails (never skips) when the browser or its driver is missing."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise AssertionError(f"node is required: {INSTALL_HINT}")
    if not (os.path.exists("/usr/bin/chromium") or os.environ.get("CHROMIUM")):
        raise AssertionError(f"chromium is required (/usr/bin/chromium): {INSTALL_HINT}")
    if not os.path.exists(os.path.join(BROWSER_MODULES, "puppeteer-core", "package.json")):
        raise AssertionError(f"puppeteer-core is missing from {BROWSER_MODULES}: {INSTALL_HINT}")
    return node


class PageTestCase(unittest.TestCase):
    """Runs the driver; keeps each test's screenshots in the class's temp
    folder and prints their paths when the test fails (the folder is then
    kept)."""

    @classmethod
    def setUpClass(cls):
        cls.node = require_browser_tools()
        cls.tmp = t.TempDir()
        cls.failed = False

    @classmethod
    def tearDownClass(cls):
        if cls.failed:
            print(f"\nkept {cls.tmp.path} (screenshots of the failed tests)", file=sys.stderr)
        else:
            cls.tmp.cleanup()

    def run(self, result=None):
        result = result if result is not None else self.defaultTestResult()
        before = len(result.failures) + len(result.errors)
        self.shots = []
        super().run(result)
        if len(result.failures) + len(result.errors) > before:
            type(self).failed = True
            for shot in self.shots:
                print(f"\n{self.id()}: screenshot {shot}", file=sys.stderr)
        return result

    def drive(self, page, steps=(), fragment=None, timeout_ms=30000):
        """Opens `page` (+ '#fragment') and runs the steps; returns the
        driver's result after checking it ran them all. A screenshot of the
        end state is saved either way."""
        name = f"{self._testMethodName}-{len(self.shots)}"
        shot = os.path.join(self.tmp.path, f"{name}.png")
        spec = {"path": page, "fragment": fragment, "timeout_ms": timeout_ms,
                "steps": list(steps) + [{"op": "screenshot", "path": shot}],
                "failure_screenshot": shot}
        spec_path = os.path.join(self.tmp.path, f"{name}.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        self.shots.append(shot)
        proc = subprocess.run([self.node, DRIVER, spec_path], capture_output=True, text=True,
                              timeout=timeout_ms / 1000 + 120)
        if proc.returncode != 0:
            self.fail(f"page_driver.js failed ({proc.returncode}): {proc.stderr[-3000:]}")
        result = json.loads(proc.stdout)
        self.assertEqual(result["state"], "ready",
                         f"{result['failure'] or ''}: data-state {result['state']!r}, "
                         f"#error {result['error_text']!r}, "
                         f"page errors {result['page_errors']}, console {result['console_errors']}")
        self.assertIsNone(result["failure"], result)
        result["steps"].pop()  # the screenshot's path
        return result

    def assertClean(self, result):
        """No console error, no uncaught exception, no dialog, no request."""
        self.assertEqual(result["console_errors"], [])
        self.assertEqual(result["page_errors"], [])
        self.assertEqual(result["dialogs"], [])
        self.assertEqual(result["requests"], [])

    def assertTop(self, rows, name, min_self, what):
        self.assertTrue(rows, f"{what}: #top-functions has no rows")
        self.assertEqual(rows[0]["name"], name, f"{what}: top rows {rows[:4]}")
        self.assertGreater(float(rows[0]["self"]), min_self, f"{what}: top rows {rows[:4]}")


def fragment_of(**keys):
    return "&".join(f"{k}={v}" for k, v in keys.items())


def matched_percent(text):
    m = re.fullmatch(r"\s*Matched: ([\d.]+)%\s*", text or "")
    if m is None:
        raise AssertionError(f"#matched reads {text!r}, not 'Matched: P%'")
    return float(m.group(1))


class RecordedTwoPhaseTest(PageTestCase):
    """`profcpu record` of two_phase: profile.html in the run folder."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.run_dir, said = t.record(cls.tmp.path, ["-freq", str(FREQ)],
                                     [t.fixture("two_phase"), str(PHASE_SECONDS)])
        cls.page = os.path.join(cls.run_dir, "profile.html")
        bounds = {k: int(v) for k, v in re.findall(r"(phase_\w+_ns)=(\d+)", said)}
        if len(bounds) != 4:
            raise AssertionError(f"two_phase did not print its phases: {said!r}")
        # Page time 0 is when collection began.
        start = t.read_metadata(cls.run_dir)["collection"]["start_monotonic_ns"]
        at = {k: (v - start) / 1e9 for k, v in bounds.items()}
        cls.phase_one = (at["phase_one_begin_ns"] + MARGIN, at["phase_one_end_ns"] - MARGIN)
        cls.phase_two = (at["phase_two_begin_ns"] + MARGIN, at["phase_two_end_ns"] - MARGIN)
        cls.folded = t.read_folded(os.path.join(cls.run_dir, "folded_stacks.out"))

    def range_fragment(self, r):
        return fragment_of(**{"from": f"{r[0]:.3f}", "to": f"{r[1]:.3f}"})

    def test_loads_clean_with_every_part_of_the_contract(self):
        self.assertTrue(os.path.exists(self.page), "record wrote no profile.html")
        result = self.drive(self.page, [
            {"op": "rows", "n": None},
            {"op": "eval", "expr": "({heatmap: document.querySelector('#heatmap') instanceof HTMLCanvasElement,"
                                   " flame: document.querySelector('#flame') instanceof HTMLCanvasElement,"
                                   " search: document.querySelector('#search') instanceof HTMLInputElement,"
                                   " matched: !!document.querySelector('#matched'),"
                                   " rowsPerSecond: window.profcpu.rowsPerSecond,"
                                   " csp: document.querySelector('meta[http-equiv=Content-Security-Policy]')"
                                   "?.content})"},
            {"op": "selection"},
        ])
        self.assertClean(result)
        rows, parts, selection = result["steps"][:3]
        self.assertTrue(parts.pop("heatmap") and parts.pop("flame") and parts.pop("search")
                        and parts.pop("matched"), parts)
        self.assertIsInstance(parts["rowsPerSecond"], int)
        self.assertGreater(parts["rowsPerSecond"], 0)
        self.assertIn("default-src 'none'", parts["csp"] or "")
        names = [r["name"] for r in rows]
        for name in ("phase_one", "phase_two", "main"):
            self.assertIn(name, names)
        self.assertEqual(len(names), len(set(names)), "a function has two rows")
        for r in rows:
            for key in ("self", "total"):
                self.assertRegex(r[key], r"^\d{1,3}\.\d\d$", r)
            self.assertLessEqual(float(r["self"]), float(r["total"]), r)
        selfs = [float(r["self"]) for r in rows]
        self.assertEqual(selfs, sorted(selfs, reverse=True), "not sorted by self share")
        # The whole run: the two phases about half each.
        for name in ("phase_one", "phase_two"):
            share = float(next(r for r in rows if r["name"] == name)["self"])
            self.assertAlmostEqual(share, 50, delta=15, msg=f"{name}: {rows[:4]}")
        # No range chosen: the whole run.
        self.assertAlmostEqual(selection["from"], 0, delta=0.01, msg=selection)
        self.assertGreaterEqual(selection["to"], self.phase_two[1], selection)

    def test_each_half_in_the_url_puts_its_phase_on_top(self):
        one, two = self.range_fragment(self.phase_one), self.range_fragment(self.phase_two)
        # The first range as the URL the page is opened with; the second
        # as a fragment change (hashchange); then back.
        result = self.drive(self.page, [
            {"op": "rows", "n": 5}, {"op": "selection"},
            {"op": "fragment", "value": two}, {"op": "rows", "n": 5}, {"op": "selection"},
            {"op": "fragment", "value": one}, {"op": "rows", "n": 5},
        ], fragment=one)
        self.assertClean(result)
        s = result["steps"]
        self.assertTop(s[0], "phase_one", 80, f"opened at #{one}")
        self.assertTop(s[3], "phase_two", 80, f"changed to #{two}")
        self.assertTop(s[6], "phase_one", 80, f"back to #{one}")
        for selection, r in ((s[1], self.phase_one), (s[4], self.phase_two)):
            self.assertAlmostEqual(selection["from"], r[0], delta=0.01, msg=selection)
            self.assertAlmostEqual(selection["to"], r[1], delta=0.01, msg=selection)

    def test_clicking_a_heatmap_cell_selects_it(self):
        # A cell in the middle of phase one, clicked while phase two's range
        # is selected.
        middle = sum(self.phase_one) / 2
        second = int(middle)
        probe = self.drive(self.page, [{"op": "eval", "expr": "window.profcpu.rowsPerSecond"}])
        rps = probe["steps"][0]
        row = min(rps - 1, int((middle - second) * rps))
        cell = (second + row / rps, second + (row + 1) / rps)
        self.assertTrue(self.phase_one[0] <= cell[0] and cell[1] <= self.phase_one[1],
                        f"cell {cell} outside phase one {self.phase_one}")
        result = self.drive(self.page, [
            {"op": "rows", "n": 3},
            {"op": "click", "second": second, "row": row},
            {"op": "selection"}, {"op": "rows", "n": 3}, {"op": "hash"},
        ], fragment=self.range_fragment(self.phase_two))
        self.assertClean(result)
        before, _, selection, after, fragment = result["steps"]
        self.assertTop(before, "phase_two", 80, "before the click")
        self.assertAlmostEqual(selection["from"], cell[0], delta=1e-6, msg=f"cell ({second}, {row})")
        self.assertAlmostEqual(selection["to"], cell[1], delta=1e-6, msg=f"cell ({second}, {row})")
        # One cell holds only a few samples (1000/rps ms at 999 Hz): the top is enough.
        self.assertTop(after, "phase_one", 50, f"after clicking cell ({second}, {row})")
        keys = parse_qs(fragment.lstrip("#"))
        self.assertAlmostEqual(float(keys["from"][0]), cell[0], delta=1e-3, msg=fragment)
        self.assertAlmostEqual(float(keys["to"][0]), cell[1], delta=1e-3, msg=fragment)

    def test_dragging_across_the_heatmap_selects_the_span(self):
        # From a cell in phase one to one in phase two: both phases in the table.
        start, end = int(sum(self.phase_one) / 2), int(sum(self.phase_two) / 2)
        result = self.drive(self.page, [
            {"op": "drag", "from": [start, 10], "to": [end, 5]},
            {"op": "eval", "expr": "window.profcpu.rowsPerSecond"},
            {"op": "selection"}, {"op": "rows", "n": 2},
        ])
        self.assertClean(result)
        _, rps, selection, rows = result["steps"]
        self.assertAlmostEqual(selection["from"], start + 10 / rps, delta=1e-6, msg=selection)
        self.assertAlmostEqual(selection["to"], end + 6 / rps, delta=1e-6, msg=selection)
        self.assertEqual({r["name"] for r in rows}, {"phase_one", "phase_two"}, rows)

    def test_search_matches_and_highlights(self):
        # A digest of the flame graph's pixels.
        flame = ("(() => { const c = document.querySelector('#flame'); const d = c.toDataURL();"
                 " let h = 2166136261; for (let i = 0; i < d.length; ++i)"
                 " h = Math.imul(h ^ d.charCodeAt(i), 16777619);"
                 " return `${c.width}x${c.height}:${h >>> 0}`; })()")
        result = self.drive(self.page, [
            {"op": "eval", "expr": flame},
            {"op": "type", "text": "phase_two"},
            {"op": "matched"}, {"op": "hash"}, {"op": "eval", "expr": flame},
        ])
        self.assertClean(result)
        plain, _, matched, fragment, searched = result["steps"]
        total = sum(self.folded.values())
        truth = 100 * t.samples_with(self.folded, lambda f: f == "phase_two") / total
        self.assertAlmostEqual(matched_percent(matched), truth, delta=10,
                               msg=f"{matched!r}; phase_two is in {truth:.1f}% of the samples")
        self.assertEqual(parse_qs(fragment.lstrip("#")).get("q"), ["phase_two"], fragment)
        self.assertNotEqual(plain, searched, "the flame graph looks the same after the search")
        # The same search given in the URL.
        again = self.drive(self.page, [{"op": "matched"}, {"op": "eval", "expr": "document.querySelector('#search').value"}],
                           fragment="q=phase_two")
        self.assertClean(again)
        self.assertEqual(again["steps"], [matched, "phase_two"])

    def test_postprocess_of_the_archive_alone_writes_it_again(self):
        elsewhere = t.TempDir()
        try:
            shutil.copy(os.path.join(self.run_dir, "prof.tar.gz"), elsewhere.path)
            t.run_profcpu(["postprocess", "-dir", elsewhere.path])
            page = os.path.join(elsewhere.path, "profile.html")
            self.assertTrue(os.path.exists(page), "postprocess wrote no profile.html")
            rows = self.drive(page, [{"op": "rows", "n": None}])
            original = self.drive(self.page, [{"op": "rows", "n": None}])
            self.assertClean(rows)
            self.assertEqual(rows["steps"][0], original["steps"][0])
        finally:
            elsewhere.cleanup()


# The switch's buttons and what each view says about itself.
VIEW_BUTTONS = ("Array.from(document.querySelectorAll('#profiles button'))"
                ".map(b => ({key: b.dataset.profile, pressed: b.getAttribute('aria-pressed'),"
                " text: b.textContent}))")
VIEW_TEXTS = ("({profile: window.profcpu.profile(), heading: document.getElementById('flame-heading').textContent,"
              " note: document.getElementById('table-note').textContent,"
              " summary: document.getElementById('summary').textContent,"
              " legend: document.getElementById('legend-high').textContent,"
              " switchHidden: document.getElementById('profiles').hidden})")


def click_view(key):
    return {"op": "eval",
            "expr": f"document.querySelector('#profiles button[data-profile={key}]').click()"}


class DotnetEventViewsTest(PageTestCase):
    """`profcpu record` of tests/dotnet/EventsApp (throws from two places,
    two threads fight over a lock): profile.html switches between the CPU
    profile and the exceptions and lock waits by stack, each view's table
    agreeing with its folded file."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        app = dn.build_project("EventsApp")
        cls.run_dir, _ = t.record(cls.tmp.path, ["-freq", "199"],
                                  [dn.DOTNET, os.path.join(app, "EventsApp.dll"), "3", "20"])
        cls.page = os.path.join(cls.run_dir, "profile.html")

    def folded(self, name):
        path = os.path.join(self.run_dir, name)
        self.assertTrue(os.path.exists(path), f"record wrote no {name}")
        return t.read_folded(path)

    def assertRowsAgreeWithFolded(self, rows, folded, what):
        """Each function's total share on the page is its share of the
        folded file's weight (stacks through it, counted once)."""
        total = sum(folded.values())
        self.assertGreater(total, 0, what)
        for row in rows[:10]:
            truth = 100 * t.samples_with(folded, lambda f, n=row["name"]: f == n) / total
            self.assertAlmostEqual(float(row["total"]), truth, delta=0.05,
                                   msg=f"{what}: {row['name']}: page {row['total']}%, "
                                       f"folded {truth:.2f}%")

    def test_switching_between_the_profiles(self):
        exceptions = self.folded("exception_stacks.out")
        lock_waits = self.folded("lock_wait_stacks.out")
        result = self.drive(self.page, [
            {"op": "eval", "expr": "window.profcpu.profiles"},
            {"op": "eval", "expr": VIEW_BUTTONS},
            {"op": "rows", "n": 5},
            click_view("exception"), {"op": "wait", "ms": 300},
            {"op": "eval", "expr": VIEW_TEXTS}, {"op": "rows", "n": None}, {"op": "hash"},
            {"op": "eval", "expr": VIEW_BUTTONS},
            click_view("lock_wait"), {"op": "wait", "ms": 300},
            {"op": "eval", "expr": VIEW_TEXTS}, {"op": "rows", "n": None},
            click_view("cpu"), {"op": "wait", "ms": 300},
            {"op": "eval", "expr": VIEW_TEXTS}, {"op": "rows", "n": 5}, {"op": "hash"},
        ])
        self.assertClean(result)
        (keys, buttons, cpu_rows, _, _, exc, exc_rows, exc_hash, pressed, _, _, lock, lock_rows,
         _, _, cpu, cpu_again, cpu_hash) = result["steps"]
        self.assertEqual(keys[0], "cpu")
        self.assertIn("exception", keys)
        self.assertIn("lock_wait", keys)
        self.assertEqual([b["key"] for b in buttons], keys)
        self.assertEqual(buttons[0]["pressed"], "true")
        self.assertTrue(any(b["key"] == "exception" and "throw" in b["text"] for b in buttons), buttons)
        # Exceptions: the thrown type is every stack's leaf; units are throws.
        self.assertEqual(exc["profile"], "exception")
        self.assertIn("throws", exc["heading"])
        self.assertIn("throws", exc["note"])
        self.assertIn("events", exc["summary"])
        self.assertFalse(exc["switchHidden"])
        self.assertTop(exc_rows, "EventsApp.TestException", 99.99, "exceptions view")
        self.assertRowsAgreeWithFolded(exc_rows, exceptions, "exceptions view")
        self.assertEqual(parse_qs(exc_hash.lstrip("#")).get("profile"), ["exception"], exc_hash)
        self.assertEqual([b["key"] for b in pressed if b["pressed"] == "true"], ["exception"])
        # Lock waits: microseconds (shown as time), both contending threads' stacks.
        self.assertEqual(lock["profile"], "lock_wait")
        self.assertIn("microseconds", lock["heading"])
        self.assertRegex(lock["legend"], r"( s| microseconds) per cell$")
        self.assertRowsAgreeWithFolded(lock_rows, lock_waits, "lock waits view")
        # Back to CPU: the same table as at load, the fragment without profile.
        self.assertEqual(cpu["profile"], "cpu")
        self.assertEqual(cpu["heading"], "Flame graph")
        self.assertEqual(cpu_again, cpu_rows)
        self.assertNotIn("profile", parse_qs(cpu_hash.lstrip("#")))
        # The fragment alone opens a view.
        opened = self.drive(self.page, [{"op": "eval", "expr": VIEW_TEXTS}, {"op": "rows", "n": None}],
                            fragment="profile=exception")
        self.assertClean(opened)
        self.assertEqual(opened["steps"][0]["profile"], "exception")
        self.assertEqual(opened["steps"][1], exc_rows)


class NoHtmlTest(unittest.TestCase):
    def test_format_no_html_writes_no_page(self):
        tmp = t.TempDir()
        try:
            run_dir, _ = t.record(tmp.path, ["-format", "no-html"], [t.fixture("two_phase"), "0.3"])
            self.assertTrue(os.path.exists(os.path.join(run_dir, "flamegraph.svg")))
            self.assertFalse(os.path.exists(os.path.join(run_dir, "profile.html")))
        finally:
            tmp.cleanup()


# Frame names a compromised target (a JIT's perf map) could give its code,
# as bytes in the perf script text, and the text the page must show. They
# pass the flame graph's naming rules unchanged (which cut a name at '(',
# drop quotes and turn ';' into ':'), so what reaches the page is markup:
# `alert`1`` calls alert as a tagged template. Bytes of ill-formed UTF-8
# become '?', as folded_stacks.out and flamegraph.svg name them
# (docs/profile-page.md).
HOSTILE = [
    (b"<img src=x onerror=alert`1`>", "<img src=x onerror=alert`1`>"),
    (b"</script><script>alert`2`</script>", "</script><script>alert`2`</script>"),
    (b"<b>bold</b>&amp: x", "<b>bold</b>&amp: x"),
    (b"bad\xff\xfeutf8\xc3end", "bad??utf8?end"),
]
# Quotes survive in a process name (comm) and in the title.
HOSTILE_COMM = "evil\"quote'<i>x</i>"
HOSTILE_TITLE = "</script><img src=x onerror=alert`3`>\"quote'"


def hostile_perf_script():
    """perf script text: 400 samples over 4 s, a quarter of them through
    each hostile frame; every other group of four in the hostile comm."""
    out = []
    for i in range(400):
        name = HOSTILE[i % len(HOSTILE)][0]
        comm, tid = (HOSTILE_COMM.encode(), 4243) if (i // 4) % 2 else (b"victim", 4242)
        out.append(b"%s %d/%d [001] %d.%06d:    1001001 cpu-clock: \n"
                   % (comm, tid, tid, 1000 + i // 100, (i % 100) * 10000))
        out.append(b"\t    7f0000001000 " + name + b"+0x10 (/tmp/perf-4242.map)\n")
        out.append(b"\t    55555555a000 handle_request+0x2a (/usr/bin/victim)\n")
        out.append(b"\t    55555555b000 main+0x10 (/usr/bin/victim)\n\n")
    return b"".join(out)


class HostileNamesTest(PageTestCase):
    """`profcpu html` on crafted perf script text: no name runs as markup."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        script = os.path.join(cls.tmp.path, "perf_script.txt")
        with open(script, "wb") as f:
            f.write(hostile_perf_script())
        cls.page = os.path.join(cls.tmp.path, "profile.html")
        t.run_profcpu(["html", "-title", HOSTILE_TITLE, "-o", cls.page, script])

    # What a name parsed as markup would have added to the document.
    INJECTED = ("({img: document.querySelectorAll('img[src=x]').length,"
                " handlers: document.querySelectorAll('[onerror]').length,"
                " bold: Array.from(document.querySelectorAll('b')).filter(e => e.textContent === 'bold').length,"
                " italic: Array.from(document.querySelectorAll('i')).filter(e => e.textContent === 'x').length,"
                " scripts: Array.from(document.scripts).filter(s => s.id !== 'profcpu-meta'"
                " && s.id !== 'profcpu-data' && /alert`/.test(s.textContent)).length})")
    TEXTS = ("({title: document.getElementById('title').textContent,"
             " processes: Array.from(document.querySelectorAll('#pid option')).map(o => o.textContent)})")

    def test_names_stay_text(self):
        result = self.drive(self.page, [
            {"op": "rows", "n": None}, {"op": "eval", "expr": self.INJECTED},
            {"op": "eval", "expr": self.TEXTS},
            {"op": "type", "text": "<img"}, {"op": "matched"}, {"op": "eval", "expr": self.INJECTED},
        ])
        self.assertClean(result)
        rows, injected, texts, _, matched, after_search = result["steps"]
        self.assertEqual(injected, {"img": 0, "handlers": 0, "bold": 0, "italic": 0, "scripts": 0})
        self.assertEqual(after_search, injected)
        by_name = {r["name"]: r for r in rows}
        for raw, shown in HOSTILE:
            self.assertIn(shown, by_name, f"{raw!r} is not a row's data-name: {list(by_name)}")
            self.assertIn(shown, by_name[shown]["text"], "the row does not show the name as text")
            self.assertAlmostEqual(float(by_name[shown]["self"]), 25, delta=0.01)
        self.assertAlmostEqual(matched_percent(matched), 25, delta=0.1)
        self.assertEqual(texts["title"], HOSTILE_TITLE)
        self.assertTrue(any(HOSTILE_COMM in p for p in texts["processes"]),
                        f"{HOSTILE_COMM!r} not among the processes {texts['processes']}")


if __name__ == "__main__":
    unittest.main()
