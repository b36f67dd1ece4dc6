"""The FlameGraph tools built into profcpu, through the real binary:
`profcpu fold` against stackcollapse-perf.pl's own outputs (every file of
../shared/testdata/stackcollapse-perf), `profcpu flamegraph` and `profcpu
diff`, and the SVG's script driven in a real browser (headless Chromium)."""

import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import unittest

import profcpu_testing as t

TESTDATA = os.environ.get(
    "PROFCPU_STACKCOLLAPSE_TESTDATA",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "testdata",
                 "stackcollapse-perf"))


def fold(args, data=None):
    return subprocess.run([t.PROFCPU, "fold", *args], input=data, capture_output=True,
                          timeout=120)


def flamegraph(args, data):
    result = subprocess.run([t.PROFCPU, "flamegraph", *args], input=data.encode(),
                            capture_output=True, timeout=120)
    return result


FRAME = re.compile(r'<g><title>([^<]*)</title><rect x="([\d.]+)" y="([\d.]+)" '
                   r'width="([\d.]+)" height="[\d.]+" fill="([^"]+)"')


def frames(svg):
    """[(title, x, y, width, fill)] of the frames drawn."""
    return [(html.unescape(m.group(1)), float(m.group(2)), float(m.group(3)),
             float(m.group(4)), m.group(5)) for m in FRAME.finditer(svg)]


def titles(svg):
    return [f[0] for f in frames(svg)]


def assert_well_formed(test, svg_bytes):
    path = os.path.join(tempfile.mkdtemp(prefix="profcpu-svg-"), "graph.svg")
    with open(path, "wb") as f:
        f.write(svg_bytes)
    if shutil.which("xmllint") is None:
        test.fail("xmllint is required: apt-get install libxml2-utils (scripts/setup.sh)")
    result = subprocess.run(["xmllint", "--noout", "--nonet", path], capture_output=True,
                            text=True)
    test.assertEqual(result.returncode, 0, result.stderr)
    shutil.rmtree(os.path.dirname(path))


class FoldTestdataTest(unittest.TestCase):
    """Every NAME.OPTION.folded the upstream script wrote, byte for byte."""

    def test_every_expected_file(self):
        inputs = os.path.join(TESTDATA, "input")
        expected = os.path.join(TESTDATA, "expected")
        self.assertTrue(os.path.isdir(expected), f"missing test data: {expected}")
        names = sorted(os.listdir(expected))
        self.assertGreater(len(names), 50, "the expected outputs are missing")
        compared = 0
        for name in names:
            stem, option, ext = name.rsplit(".", 2)
            self.assertEqual(ext, "folded", name)
            source = os.path.join(inputs, stem + ".txt")
            self.assertTrue(os.path.isfile(source), f"no input for {name}")
            args = [] if option == "default" else [f"--{option}"]
            result = fold(args + [source])
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(os.path.join(expected, name), "rb") as f:
                want = f.read()
            self.assertTrue(result.stdout == want,
                            f"profcpu fold {' '.join(args)} {stem}.txt differs from {name}")
            compared += 1
        self.assertEqual(compared, len(names))

    def test_stdin_dash_and_several_files(self):
        source = os.path.join(TESTDATA, "input", "perf-vertx-stacks-01.txt")
        with open(source, "rb") as f:
            data = f.read()
        from_file = fold([source])
        from_stdin = fold(["-"], data)
        self.assertEqual(from_stdin.returncode, 0)
        self.assertEqual(from_stdin.stdout, from_file.stdout)
        self.assertGreater(len(from_file.stdout), 1000)
        # Several files read as one stream, as the script's <> reads them.
        twice = fold([source, source])
        self.assertEqual(twice.returncode, 0)
        self.assertEqual(twice.stdout, fold(["-"], data + data).stdout)
        self.assertNotEqual(twice.stdout, from_file.stdout)

    def test_event_filter(self):
        """--event-filter (not in the expected outputs): this input has 333
        instructions samples, then 111 cycles samples, without periods."""
        source = os.path.join(TESTDATA, "input", "perf-cycles-instructions-01.txt")

        def total(args):
            result = fold(args + [source])
            self.assertEqual(result.returncode, 0, result.stderr)
            return sum(int(line.rsplit(b" ", 1)[1]) for line in result.stdout.splitlines())

        self.assertEqual(total([]), 333)  # the first event met
        self.assertEqual(total(["--event-filter", "instructions"]), 333)
        self.assertEqual(total(["--event-filter", "cycles"]), 111)
        self.assertEqual(total(["--event-filter", "cycles", "--tid", "--all"]), 111)
        self.assertEqual(total(["--event-filter", "page-faults"]), 0)

    def test_errors(self):
        missing = fold(["/nonexistent/perf.txt"])
        self.assertEqual(missing.returncode, 1)
        self.assertIn(b"/nonexistent/perf.txt", missing.stderr)
        bad = fold(["--bogus"])
        self.assertEqual(bad.returncode, 2)
        self.assertIn(b"unknown flag", bad.stderr)
        self.assertIn(b"--event-filter", fold(["--help"]).stdout)


class FlamegraphCommandTest(unittest.TestCase):
    FOLDED = ("main;worker;handle;parse_request 30\n"
              "main;worker;handle;compute;mix_block 50\n"
              "main;worker;handle;compute 10\n"
              "main;logger;write_log_lines;write_[k] 10\n")

    def test_frames_counts_and_options(self):
        result = flamegraph(["--title", "My Graph", "--countname", "ms", "--width", "800"],
                            self.FOLDED)
        self.assertEqual(result.returncode, 0, result.stderr)
        svg = result.stdout.decode()
        self.assertIn(">My Graph</text>", svg)
        self.assertIn('width="800"', svg)
        got = titles(svg)
        self.assertIn("all (100 ms, 100%)", got)
        self.assertIn("compute (60 ms, 60.00%)", got)
        self.assertIn("write (10 ms, 10.00%)", got)  # annotation not shown
        by_title = {f[0]: f for f in frames(svg)}
        self.assertAlmostEqual(by_title["mix_block (50 ms, 50.00%)"][3], 390, delta=0.02)
        assert_well_formed(self, result.stdout)

    def test_inverted_reverse_and_minwidth(self):
        svg = flamegraph(["--inverted"], self.FOLDED).stdout.decode()
        self.assertIn(">Icicle Graph</text>", svg)
        roots = [f for f in frames(svg) if f[0].startswith("all ")]
        leaves = [f for f in frames(svg) if f[0].startswith("mix_block ")]
        self.assertLess(roots[0][2], leaves[0][2])  # the root hangs at the top
        # Reversed, leaves become roots: mix_block is a child of "all".
        svg = flamegraph(["--reverse"], self.FOLDED).stdout.decode()
        depth = {f[0].split(" (")[0]: f[2] for f in frames(svg)}
        self.assertEqual(depth["mix_block"], depth["write"])
        self.assertGreater(depth["mix_block"], depth["main"])
        # --minwidth 15%: only frames of at least 15 samples.
        svg = flamegraph(["--minwidth", "15%"], self.FOLDED).stdout.decode()
        self.assertNotIn("write_log_lines", svg)
        self.assertIn("parse_request", svg)

    def test_every_graph_flag_takes_effect(self):
        """flamegraph.pl's flags, each through the real command line."""
        def svg(*args, data=self.FOLDED):
            result = flamegraph(list(args), data)
            self.assertEqual(result.returncode, 0, (args, result.stderr))
            return result.stdout.decode()

        def by_name(text):
            return {f[0].split(" (")[0]: f for f in frames(text)}

        plain = svg()
        self.assertIn('>Sub Title</text>', svg("--subtitle", "Sub Title"))
        self.assertIn('height="23.0"', svg("--height", "24"))
        self.assertNotIn('height="23.0"', plain)
        # --minwidth in pixels: 400 of 1180 px is 33.9 of 100 samples.
        narrow = by_name(svg("--minwidth", "400"))
        self.assertIn("compute", narrow)
        self.assertNotIn("parse_request", narrow)
        self.assertIn("parse_request", by_name(svg("--minwidth", "300")))
        self.assertIn("mix_block (50 ms, 50.00%)", titles(svg("--countname", "ms")))
        self.assertIn('data-name-type="Method:"', svg("--nametype", "Method:"))
        self.assertIn("<!-- NOTES: my notes -->", svg("--notes", "my notes"))
        # --total: 200 spans the width, so 50 samples take a quarter of it.
        self.assertAlmostEqual(by_name(svg("--total", "200"))["mix_block"][3], 295, delta=0.02)
        self.assertIn("mix_block (100 samples, 50.00%)", titles(svg("--factor", "2")))
        # --flamechart keeps the input order (worker before logger); merged
        # graphs sort siblings by name (logger first).
        chart = svg("--flamechart")
        self.assertIn(">Flame Chart</text>", chart)
        self.assertLess(by_name(chart)["worker"][1], by_name(chart)["logger"][1])
        self.assertGreater(by_name(plain)["worker"][1], by_name(plain)["logger"][1])

        # Colours: every palette is accepted; the same name gets the same
        # colour in another process; --hash colours differently, --random
        # differs from run to run.
        # JIT, kernel, Perl and .NET frames, for the palettes that tell them apart.
        mixed = self.FOLDED + ("java;Ljava/lang/Thread;.run_[j];handler.js:12_[j];"
                               "Perl_pp_entersub;main::handler;System.Linq.Sum()[PreJIT]_[p];"
                               "MethodDesc::DoPrestub;do_syscall_64_[k] 10\n")
        fills = {}
        for palette in ["hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "dotnet",
                        "red", "green", "blue", "aqua", "yellow", "purple", "orange"]:
            fills[palette] = [f[4] for f in frames(svg("--colors", palette, data=mixed))]
        self.assertEqual(plain, svg())
        self.assertEqual(fills["hot"], [f[4] for f in frames(svg(data=mixed))])
        for r, g, b in (map(int, re.findall(r"\d+", fill)) for fill in fills["blue"]):
            self.assertGreater(b, r)
        # All differ but wakeup (aqua) and chain (blue without waker frames).
        self.assertEqual(fills["wakeup"], fills["aqua"])
        self.assertEqual(fills["chain"], fills["blue"])
        # --cool-subtree: compute and its callee blue, everything else hot.
        cool = {name: tuple(map(int, re.findall(r"\d+", f[4])))
                for name, f in by_name(svg("--cool-subtree", "compute")).items()}
        self.assertEqual({name for name, (r, g, b) in cool.items() if b > r and b > g},
                         {"compute", "mix_block"})
        self.assertEqual(len({tuple(v) for v in fills.values()}), len(fills) - 2)
        self.assertNotEqual([f[4] for f in frames(svg("--hash"))], [f[4] for f in frames(plain)])
        self.assertNotEqual(svg("--random"), svg("--random"))
        bad = flamegraph(["--colors", "rainbow"], self.FOLDED)
        self.assertEqual(bad.returncode, 2)
        self.assertIn(b"unknown palette", bad.stderr)

    def test_differential_from_profcpu_diff(self):
        tmp = tempfile.mkdtemp(prefix="profcpu-diff-")
        try:
            before = os.path.join(tmp, "before.folded")
            after = os.path.join(tmp, "after.folded")
            with open(before, "w") as f:
                f.write("main;a 10\nmain;b 30\nmain;e 7\nmain;f 4\n")
            with open(after, "w") as f:
                f.write("main;a 20\nmain;b 10\nmain;c;d 5\nmain;f;g 1\n")
            diff = subprocess.run([t.PROFCPU, "diff", before, after], capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(diff.returncode, 0, diff.stderr)
            self.assertEqual(diff.stdout, "main;a 10 20\nmain;b 30 10\nmain;c;d 0 5\nmain;e 7 0\n"
                             "main;f 4 0\nmain;f;g 0 1\n")
            # "-" reads stdin, as fold and flamegraph do.
            with open(before) as stdin:
                piped = subprocess.run([t.PROFCPU, "diff", "-", after], stdin=stdin,
                                       capture_output=True, text=True, timeout=60)
            self.assertEqual(piped.returncode, 0, piped.stderr)
            self.assertEqual(piped.stdout, diff.stdout)
            svg = flamegraph([], diff.stdout).stdout.decode()
            by_name = {f[0].split(" (")[0]: f for f in frames(svg)}
            self.assertEqual(by_name["a"][0], "a (20 samples, 55.56%; +27.78%)")
            self.assertEqual(by_name["a"][4], "rgb(255,105,105)")  # grew: red
            self.assertEqual(by_name["b"][4], "rgb(0,0,255)")      # shrank most: blue
            self.assertNotIn("e", by_name)                         # gone: no width
            # f lost its own 4 samples; g, new, keeps it in the graph, and f
            # shows its change as flamegraph.pl does.
            self.assertEqual(by_name["f"][0], "f (1 samples, 2.78%; -11.11%)")
            self.assertEqual(by_name["f"][4], "rgb(168,168,255)")
            self.assertEqual(by_name["g"][0], "g (1 samples, 2.78%; +2.78%)")
            negated = {f[0].split(" (")[0]: f for f in frames(
                flamegraph(["--negate"], diff.stdout).stdout.decode())}
            self.assertEqual(negated["b"][4], "rgb(255,0,0)")       # --negate: hues swap
            self.assertEqual(negated["a"][0], "a (20 samples, 55.56%; -27.78%)")
        finally:
            shutil.rmtree(tmp)

    def test_hostile_names_stay_valid_xml(self):
        folded = ("main;<script>alert(1)</script>;a&b 3\n"
                  "main;\"quoted\" 'single';]]> -- 2\n").encode()
        folded += b"main;bad\xff\xfe\x01bytes 1\n"
        result = subprocess.run([t.PROFCPU, "flamegraph", "--notes", "n <x> -- y"],
                                input=folded, capture_output=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        assert_well_formed(self, result.stdout)
        self.assertNotIn(b"<script>alert", result.stdout)

    def test_empty_input_fails_with_a_small_svg(self):
        result = flamegraph([], "")
        self.assertEqual(result.returncode, 1)
        self.assertIn(b"No stack counts found", result.stderr)
        assert_well_formed(self, result.stdout)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


# Drives the graph in an iframe (same origin, so the page can reach in) and
# reports what the user would see after each step as JSON in #out.
HARNESS = """<!doctype html><html><body>
<iframe id="f" src="%(file)s%(query)s" width="1200" height="600"></iframe>
<pre id="out">not run</pre>
<script>
function frameNamed(d, prefix) {
  return Array.from(d.querySelectorAll("#frames > g")).find(function (g) {
    return g.querySelector("title").textContent.indexOf(prefix + " (") === 0;
  });
}
function state(w, d) {
  var names = {};
  Array.from(d.querySelectorAll("#frames > g")).forEach(function (g) {
    var name = g.querySelector("title").textContent.split(" (")[0];
    names[name] = {cls: g.getAttribute("class") || "",
                   x: g.querySelector("rect").getAttribute("x"),
                   y: g.querySelector("rect").getAttribute("y"),
                   width: g.querySelector("rect").getAttribute("width"),
                   label: g.querySelector("text").textContent};
  });
  return {frames: names, url: w.location.search,
          matched: d.getElementById("matched").textContent,
          matchedClass: d.getElementById("matched").getAttribute("class") || "",
          unzoomClass: d.getElementById("unzoom").getAttribute("class") || "",
          ignorecaseClass: d.getElementById("ignorecase").getAttribute("class") || "",
          details: d.getElementById("details").textContent};
}
document.getElementById("f").addEventListener("load", function () {
  var w = this.contentWindow, d = this.contentDocument, steps = {};
  try {
    steps.loaded = state(w, d);
    %(steps)s
  } catch (e) { steps.error = String(e) + " " + e.stack; }
  document.getElementById("out").textContent = JSON.stringify(steps);
});
</script></body></html>"""

INTERACT = """
    var rect = frameNamed(d, "compute").querySelector("rect");
    rect.dispatchEvent(new w.MouseEvent("mouseover", {bubbles: true}));
    steps.hover = state(w, d);
    rect.dispatchEvent(new w.MouseEvent("mouseout", {bubbles: true}));
    rect.dispatchEvent(new w.MouseEvent("click", {bubbles: true}));
    steps.zoom = state(w, d);
    w.prompt = function () { return "MIX_|parse"; };
    w.dispatchEvent(new w.KeyboardEvent("keydown", {key: "f", ctrlKey: true, bubbles: true}));
    steps.search = state(w, d);
    w.dispatchEvent(new w.KeyboardEvent("keydown", {key: "i", ctrlKey: true, bubbles: true}));
    steps.ignorecase = state(w, d);
    d.getElementById("unzoom").dispatchEvent(new w.MouseEvent("click", {bubbles: true}));
    steps.unzoom = state(w, d);
    w.prompt = function () { return "(unclosed"; };
    w.dispatchEvent(new w.KeyboardEvent("keydown", {key: "F3", bubbles: true}));
    steps.badregex = state(w, d);
    w.dispatchEvent(new w.KeyboardEvent("keydown", {key: "Escape", bubbles: true}));
    steps.escape = state(w, d);
"""


class BrowserTest(unittest.TestCase):
    """The SVG's script in headless Chromium: hover, zoom, search, URL state."""

    FOLDED = ("main;worker;handle;parse_request 30\n"
              "main;worker;handle;compute;mix_block 50\n"
              "main;worker;handle;compute 10\n"
              "main;logger;write_log_lines;write 10\n"
              "main;odd<&>\"name\" 1\n")

    @classmethod
    def setUpClass(cls):
        cls.chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if cls.chromium is None:
            raise AssertionError("chromium is required: apt-get install chromium "
                                 "(scripts/setup.sh installs it)")
        cls.tmp = tempfile.mkdtemp(prefix="profcpu-browser-")
        svg = flamegraph([], cls.FOLDED)
        assert svg.returncode == 0, svg.stderr
        with open(os.path.join(cls.tmp, "graph.svg"), "wb") as f:
            f.write(svg.stdout)
        # One deep, one-sample stack beside the profile's bulk (as a stack
        # of 118 unknown frames from a broken frame-pointer walk makes it).
        deep = ";".join(["main"] + ["[unknown]"] * 118) + " 1\nmain;work 1974\n"
        for name, flags in [("deep.svg", []), ("deep-icicle.svg", ["--inverted"])]:
            svg = flamegraph(flags, deep)
            assert svg.returncode == 0, svg.stderr
            with open(os.path.join(cls.tmp, name), "wb") as f:
                f.write(svg.stdout)
        handler = functools.partial(_QuietHandler, directory=cls.tmp)
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_page(self, steps, query="", file="graph.svg"):
        name = f"harness{abs(hash((steps, query, file)))}.html"
        with open(os.path.join(self.tmp, name), "w") as f:
            f.write(HARNESS % {"file": file, "query": query, "steps": steps})
        profile = tempfile.mkdtemp(prefix="profcpu-chromium-")
        try:
            result = subprocess.run(
                [self.chromium, "--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", f"--user-data-dir={profile}", "--virtual-time-budget=10000",
                 "--dump-dom", f"http://127.0.0.1:{self.server.server_port}/{name}"],
                capture_output=True, text=True, timeout=120)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        match = re.search(r'<pre id="out">(.*?)</pre>', result.stdout, re.S)
        self.assertIsNotNone(match, f"no result from chromium:\n{result.stderr[-2000:]}")
        steps_out = json.loads(html.unescape(match.group(1)))
        self.assertNotIn("error", steps_out, steps_out.get("error"))
        return steps_out

    def test_hover_zoom_search_case_and_reset(self):
        s = self.run_page(INTERACT)
        loaded = s["loaded"]["frames"]
        self.assertIn('odd<&>"name"', loaded)  # escaped in the file, intact on screen
        self.assertEqual(s["hover"]["details"], "Function: compute (60 samples, 59.41%)")
        self.assertEqual(s["zoom"]["details"].strip(), "")

        # Zoom: compute fills the width, its callers stretch and dim, the rest hides.
        zoom = s["zoom"]["frames"]
        self.assertAlmostEqual(float(zoom["compute"]["width"]), 1180, delta=0.01)
        self.assertAlmostEqual(float(zoom["mix_block"]["width"]), 1180 * 50 / 60, delta=0.02)
        for caller in ["handle", "worker", "main"]:
            self.assertIn("parent", zoom[caller]["cls"], caller)
            self.assertAlmostEqual(float(zoom[caller]["width"]), 1180, delta=0.01)
        for other in ["parse_request", "logger", "write"]:
            self.assertIn("hide", zoom[other]["cls"], other)
        self.assertNotIn("hide", s["zoom"]["unzoomClass"])
        self.assertRegex(s["zoom"]["url"], r"[?&]x=[\d.]+&y=[\d.]+")

        # Search inside the zoom: a case-sensitive "MIX_" misses; parse_request is hidden.
        search = s["search"]
        self.assertEqual(search["matched"], "Matched: 0.0%")
        self.assertIn("s=MIX_%7Cparse", search["url"])
        # Ctrl-I: case-insensitive, mix_block matches: 50 of compute's 60.
        ic = s["ignorecase"]
        self.assertIn("show", ic["ignorecaseClass"])
        self.assertIn("match", ic["frames"]["mix_block"]["cls"])
        self.assertEqual(ic["matched"], "Matched: 83.3%")

        # Reset Zoom: everything back in place, the search stays and counts
        # the whole graph: parse_request 30 + mix_block 50 of 101.
        unzoom = s["unzoom"]
        self.assertEqual(unzoom["frames"], {name: dict(f, cls=unzoom["frames"][name]["cls"])
                                            for name, f in s["loaded"]["frames"].items()})
        self.assertIn("match", unzoom["frames"]["parse_request"]["cls"])
        self.assertEqual(unzoom["matched"], "Matched: 79.2%")
        self.assertNotRegex(unzoom["url"], r"[?&]x=")
        self.assertIn("hide", unzoom["unzoomClass"])

        self.assertEqual(s["badregex"]["matched"], "Invalid regular expression")
        self.assertNotIn("s=", s["escape"]["url"])
        self.assertIn("hide", s["escape"]["matchedClass"])

    def test_state_restored_from_the_url(self):
        s = self.run_page(INTERACT)
        zoom_query = s["zoom"]["url"]
        restored = self.run_page("", query=zoom_query.replace("&amp;", "&") + "&s=write")
        frames_state = restored["loaded"]["frames"]
        self.assertAlmostEqual(float(frames_state["compute"]["width"]), 1180, delta=0.01)
        self.assertIn("hide", frames_state["logger"]["cls"])
        # "write" matches only hidden frames in this zoom.
        self.assertEqual(restored["loaded"]["matched"], "Matched: 0.0%")
        self.assertIn("match", frames_state["write_log_lines"]["cls"])

    def test_a_deep_graph_opens_where_its_frames_are(self):
        # The image is several windows tall; the window must show the root
        # and the bulk of the profile, not the empty top of the one tower.
        where = """
    var rect = frameNamed(d, "work").querySelector("rect").getBoundingClientRect();
    steps.view = {top: rect.top, bottom: rect.bottom, window: w.innerHeight,
                  image: parseFloat(d.documentElement.getAttribute("height"))};"""
        for file in ["deep.svg", "deep-icicle.svg"]:
            view = self.run_page(where, file=file)["view"]
            self.assertGreater(view["image"], 3 * view["window"], file)
            self.assertGreaterEqual(view["top"], 0, file)
            self.assertLessEqual(view["bottom"], view["window"], file)


if __name__ == "__main__":
    unittest.main()
