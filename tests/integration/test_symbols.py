"""Symbolization in depth through the real binary and real perf events:
DWARF call graphs of code without frame pointers, inlined frames, debug
files found by build-id and debuglink, late symbolization with
postprocess -symbols, a library loaded mid-run, and JIT code named by
jitdump at the right time (reused and moved code), from a synthetic runtime
and from Node.js --perf-prof."""

import glob
import os
import re
import shutil
import subprocess
import tarfile
import time
import unittest

import profcpu_testing as t


def symfix(name):
    return t.fixture(os.path.join("symbols", name))


def record(out_dir, command, extra=(), freq=199, timeout=120):
    """profcpu record ... -- command; returns the run folder."""
    result = t.run_profcpu(["record", "-freq", str(freq), "-out", out_dir, *extra, "--", *command],
                           timeout=timeout)
    run_dir = result.stdout.strip().splitlines()[-1]
    if not os.path.isdir(run_dir):
        raise AssertionError(f"profcpu printed {run_dir!r}; stderr:\n{result.stderr}")
    return run_dir


def postprocess_copy(run_dir, dest, extra=()):
    """Copies only prof.tar.gz into `dest` and runs postprocess there (as on a
    laptop with nothing else); returns `dest`."""
    os.makedirs(dest)
    shutil.copy(os.path.join(run_dir, "prof.tar.gz"), dest)
    t.run_profcpu(["postprocess", "-dir", dest, *extra])
    return dest


def folded(run_dir):
    return t.read_folded(os.path.join(run_dir, "folded_stacks.out"))


def share(stacks, predicate, among):
    """Fraction of the samples whose stack matches `among` that also match `predicate`."""
    total = sum(c for s, c in stacks.items() if among(s))
    hit = sum(c for s, c in stacks.items() if among(s) and predicate(s))
    return hit / total if total else 0.0, total


def has(frame_part):
    return lambda stack: any(frame_part in f for f in stack)


def in_order(*parts):
    """The stack holds frames containing each part, root to leaf in this order."""
    def check(stack):
        position = 0
        for part in parts:
            while position < len(stack) and part not in stack[position]:
                position += 1
            if position == len(stack):
                return False
            position += 1
        return True
    return check


class DwarfCallgraphTest(unittest.TestCase):
    """symfix_nofp has no frame pointers: only -callgraph dwarf sees its callers."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        cls.dwarf_dir = record(cls.tmp.path, [symfix("symfix_nofp"), "2"],
                               extra=["-callgraph", "dwarf"])
        cls.fp_dir = record(os.path.join(cls.tmp.path, "fp"), [symfix("symfix_nofp"), "2"],
                            extra=["-callgraph", "fp"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_dwarf_walks_every_caller(self):
        stacks = folded(self.dwarf_dir)
        fraction, total = share(stacks, in_order("main", "symfix::Outer", "symfix::Middle",
                                                 "symfix::Churn"), has("symfix::Churn"))
        self.assertGreater(total, 100, "too few samples in Churn")
        self.assertGreater(fraction, 0.9, f"{fraction:.2f} of {total} Churn samples have callers")

    def test_frame_pointers_cannot(self):
        # The contrast that makes the DWARF test meaningful.
        fraction, total = share(folded(self.fp_dir), in_order("symfix::Outer", "symfix::Middle",
                                                              "symfix::Churn"),
                                has("symfix::Churn"))
        self.assertGreater(total, 100)
        self.assertLess(fraction, 0.5)

    def test_truncation_is_counted_and_small(self):
        meta = t.read_metadata(self.dwarf_dir)
        self.assertEqual(meta["collection"]["callgraph"], "dwarf,8192")
        unwinding = meta["dwarf_unwinding"]
        self.assertGreater(unwinding["stacks"], 100)
        self.assertEqual(unwinding["not_unwound"], 0)
        self.assertLess(unwinding["truncated"], unwinding["stacks"] * 0.1)
        # Unwinds that stopped early leave stacks short of their thread's
        # root; whole DWARF unwinds reach it (clone3, _start), so few are cut.
        self.assertNotIn("truncated_stacks", meta["samples"])
        self.assertLess(meta["stacks"]["cut_short"], unwinding["stacks"] * 0.1, meta["stacks"])
        self.assertEqual(meta["recording_format_version"], 3)

    def test_archive_replays_the_same_stacks_elsewhere(self):
        with tarfile.open(os.path.join(self.dwarf_dir, "prof.tar.gz")) as archive:
            self.assertIn("unwound_stacks.bin", archive.getnames())
        laptop = postprocess_copy(self.dwarf_dir, os.path.join(self.tmp.path, "laptop"))
        self.assertEqual(folded(laptop), folded(self.dwarf_dir))

    def test_inlined_frames_and_lines_in_perf_script(self):
        with open(os.path.join(self.dwarf_dir, "perf_script.out"), encoding="utf-8") as f:
            text = f.read()
        self.assertRegex(text, r"symfix::Mixer<unsigned long>::Blend\(.*\)\+0x[0-9a-f]+ \(inlined\)")
        stacks = folded(self.dwarf_dir)
        fraction, _ = share(stacks, in_order("symfix::Churn", "symfix::Mixer<unsigned long>::Blend"),
                            has("symfix::Churn"))
        self.assertGreater(fraction, 0.5)


class DebugFileTest(unittest.TestCase):
    """Stripped fixtures named from their debug files, found by each rule, and
    late symbolization on another machine with postprocess -symbols."""

    def setUp(self):
        self.tmp = t.TempDir()

    def tearDown(self):
        self.tmp.cleanup()

    def app_dir(self, *names):
        app = os.path.join(self.tmp.path, "app")
        os.makedirs(app, exist_ok=True)
        for name in names:
            shutil.copy(symfix(name), app)
        return app

    def assert_named(self, run_dir):
        stacks = folded(run_dir)
        fraction, total = share(stacks, has("symfix::Churn"), lambda s: True)
        self.assertGreater(fraction, 0.8, f"Churn in {fraction:.2f} of {total} samples")
        self.assertTrue(any(in_order("symfix::Outer", "symfix::Churn",
                                     "symfix::Mixer<unsigned long>::Blend")(s) for s in stacks))

    def test_debuglink_beside_the_stripped_file(self):
        app = self.app_dir("symfix_stripped", "symfix_stripped.dbg")
        run = record(os.path.join(self.tmp.path, "out"), [os.path.join(app, "symfix_stripped"), "1.5"])
        self.assert_named(run)
        with open(os.path.join(run, "profcpu.log"), encoding="utf-8") as f:
            self.assertIn("debuglink beside the file", f.read())

    def test_plain_postprocess_keeps_the_symbol_statistics(self):
        # postprocess names every frame from the snapshot and reads no file:
        # metadata.json must still say what the collection found.
        app = self.app_dir("symfix_stripped", "symfix_stripped.dbg")
        run = record(os.path.join(self.tmp.path, "out"), [os.path.join(app, "symfix_stripped"), "1"])
        before = t.read_metadata(run)["symbols"]
        self.assertGreater(before["distinct_locations"], 0)
        self.assertGreater(before["resolved"], 0)
        self.assertGreaterEqual(before["modules_with_debug_info"], 1)
        t.run_profcpu(["postprocess", "-dir", run])
        self.assertEqual(t.read_metadata(run)["symbols"], before)

    def test_late_symbolization_by_build_id(self):
        app = self.app_dir("symfix_buildid")  # no debug file anywhere near
        binary = os.path.join(app, "symfix_buildid")
        run = record(os.path.join(self.tmp.path, "out"), [binary, "1.5"])
        self.assertFalse(any(has("symfix::Churn")(s) for s in folded(run)))
        # The run says where its unknown frames are: mostly in the stripped binary.
        symbols_meta = t.read_metadata(run)["symbols"]
        by_module = symbols_meta["unknown_frames_by_module"]
        self.assertEqual(sum(by_module.values()), symbols_meta["unknown_frames_in_samples"])
        self.assertEqual(next(iter(by_module)), binary, by_module)
        with open(os.path.join(run, "profcpu.log"), encoding="utf-8") as f:
            log = f.read()
        self.assertIn(f"unknown frames by module: {binary} {by_module[binary]}", log)
        self.assertIn("-symbols DIR", log)
        # On the "laptop": the archive and a build-id tree of debug files.
        hex_id = build_id(symfix("symfix_buildid"))
        symbols = os.path.join(self.tmp.path, "symbols")
        os.makedirs(os.path.join(symbols, ".build-id", hex_id[:2]))
        shutil.copy(symfix("symfix_buildid.debug"),
                    os.path.join(symbols, ".build-id", hex_id[:2], hex_id[2:] + ".debug"))
        laptop = postprocess_copy(run, os.path.join(self.tmp.path, "laptop"),
                                  ["-symbols", symbols])
        self.assert_named(laptop)
        self.assertGreater(t.read_metadata(laptop)["symbols"]["retried_with_symbol_dirs"], 0)
        self.assertNotIn(binary, t.read_metadata(laptop)["symbols"]["unknown_frames_by_module"])
        # Without the symbol directory, the same archive stays unnamed.
        bare = postprocess_copy(run, os.path.join(self.tmp.path, "bare"))
        self.assertFalse(any(has("symfix::Churn")(s) for s in folded(bare)))

    def test_this_machines_debug_files_name_frames_by_default(self):
        # The issue: a laptop with the library's debug package installed (its
        # /usr/lib/debug, here a scratch one through PROFCPU_SYSTEM_DEBUG_DIR)
        # or the debug file in debuginfod's client cache postprocessed an
        # archive and left the library unknown until -symbols was given.
        app = self.app_dir("symfix_buildid")  # no debug file anywhere near
        binary = os.path.join(app, "symfix_buildid")
        run = record(os.path.join(self.tmp.path, "out"), [binary, "1.5"])
        self.assertFalse(any(has("symfix::Churn")(s) for s in folded(run)))
        hex_id = build_id(symfix("symfix_buildid"))
        home = os.path.join(self.tmp.path, "home")  # no caches but these
        os.makedirs(home)
        base_env = {**os.environ, "HOME": home, "XDG_CACHE_HOME": os.path.join(home, ".cache")}
        base_env.pop("DEBUGINFOD_CACHE_PATH", None)
        base_env.pop("DEBUGINFOD_URLS", None)

        def postprocess(name, env):
            dest = os.path.join(self.tmp.path, name)
            os.makedirs(dest)
            shutil.copy(os.path.join(run, "prof.tar.gz"), dest)
            subprocess.run([t.PROFCPU, "postprocess", "-dir", dest], env=env, check=True,
                           capture_output=True, text=True, timeout=120)
            with open(os.path.join(dest, "profcpu.log"), encoding="utf-8") as f:
                return dest, f.read()

        def debug_tree(name, debug_file):
            root = os.path.join(self.tmp.path, name, "usr", "lib", "debug")
            os.makedirs(os.path.join(root, ".build-id", hex_id[:2]))
            shutil.copy(debug_file, os.path.join(root, ".build-id", hex_id[:2],
                                                 hex_id[2:] + ".debug"))
            return root

        # This machine's /usr/lib/debug by build-id, with no flag.
        debug_dir = debug_tree("laptop-root", symfix("symfix_buildid.debug"))
        laptop, log = postprocess("laptop", {**base_env, "PROFCPU_SYSTEM_DEBUG_DIR": debug_dir})
        self.assert_named(laptop)
        self.assertNotIn(binary, t.read_metadata(laptop)["symbols"]["unknown_frames_by_module"])
        self.assertIn(f"{binary}: debug file {debug_dir}/.build-id/{hex_id[:2]}/{hex_id[2:]}.debug "
                      "in this machine's root (build-id)", log)

        # debuginfod's client cache ($XDG_CACHE_HOME/debuginfod_client), as
        # gdb or debuginfod-find left it.
        cache = os.path.join(home, ".cache", "debuginfod_client", hex_id)
        os.makedirs(cache)
        shutil.copy(symfix("symfix_buildid.debug"), os.path.join(cache, "debuginfo"))
        cached, log = postprocess("cached", base_env)
        self.assert_named(cached)
        self.assertIn("debuginfo in this machine's debuginfod cache", log)
        shutil.rmtree(cache)

        # A debug file of another build (symfix_dwarf4) under this build-id's
        # name is not used: the frames stay unknown, and the log says why.
        wrong_dir = debug_tree("wrong-root", symfix("symfix_dwarf4"))
        wrong, log = postprocess("wrong", {**base_env, "PROFCPU_SYSTEM_DEBUG_DIR": wrong_dir})
        self.assertFalse(any(has("symfix::Churn")(s) for s in folded(wrong)))
        self.assertRegex(log, r"ignoring debug file \S+ in this machine's root for "
                              + re.escape(binary) + r": its build-id [0-9a-f]+ is not " + hex_id)

    def test_record_with_a_symbol_directory(self):
        app = self.app_dir("symfix_buildid")
        symbols = os.path.join(self.tmp.path, "dotnet-symbol-style")
        os.makedirs(symbols)
        shutil.copy(symfix("symfix_buildid.debug"), symbols)  # flat, by file name
        run = record(os.path.join(self.tmp.path, "out"), [os.path.join(app, "symfix_buildid"), "1.5"],
                     extra=["-symbols", symbols])
        self.assert_named(run)

    def test_executable_deleted_while_it_runs(self):
        # A redeploy that replaces a running service's binary: the file that
        # was mapped is read through /proc/PID/map_files, named as before.
        app = self.app_dir("symfix_dwarf5")
        path = os.path.join(app, "symfix_dwarf5")
        proc = t.start([path, "6"])
        try:
            time.sleep(0.5)
            os.remove(path)
            run = t.collect(proc.pid, os.path.join(self.tmp.path, "out"), duration=2, freq=199)
        finally:
            t.stop(proc)
        self.assert_named(run)
        with open(os.path.join(run, "profcpu.log"), encoding="utf-8") as f:
            self.assertNotIn("deleted after it was mapped", f.read())

    def test_library_loaded_mid_run(self):
        run = record(os.path.join(self.tmp.path, "out"),
                     [symfix("symfix_dwarf5"), "2", symfix("libsymfix_plugin.so")])
        stacks = folded(run)
        before, _ = share(stacks, has("symfix::Churn"), lambda s: True)
        after, _ = share(stacks, in_order("main", "symfix_plugin_work", "plugin::PluginInner"),
                         lambda s: True)
        self.assertGreater(before, 0.25)
        self.assertGreater(after, 0.25)


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    match = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not match:
        raise AssertionError(f"{path} has no build-id")
    return match.group(1)


class JitdumpTest(unittest.TestCase):
    """jit_writer loads jit_first at A, then jit_second at A, then moves it to
    a "/memfd:doublemapper (deleted)" mapping; its perf map names one more
    method with a .NET tier."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        cls.run_dir = record(cls.tmp.path, [symfix("jit_writer"), "3", cls.tmp.path], freq=299)
        cls.samples = t.parse_like_flamescope(os.path.join(cls.run_dir, "perf_script.out"))
        for pid_info in t.read_metadata(cls.run_dir)["processes"]:
            for path in glob.glob(f"/tmp/perf-{pid_info['pid']}.map"):
                os.unlink(path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def leaf_times(self, name):
        return [s[0] for s in self.samples if s[2] and s[2][0][0].startswith(name)]

    def test_reused_address_is_named_by_time(self):
        first = self.leaf_times("jit_first")
        second = self.leaf_times("jit_second")
        self.assertGreater(len(first), 30)
        self.assertGreater(len(second), 60)
        # Everything named jit_first ran before anything named jit_second.
        self.assertLess(max(first), min(second))

    def test_moved_code_is_named_in_its_memfd_mapping(self):
        moved = [s for s in self.samples
                 if s[2] and s[2][0][0].startswith("jit_second")]
        addresses = {line for s in moved for line in [s[2][0]]}
        self.assertTrue(moved)
        with open(os.path.join(self.run_dir, "perf_script.out"), encoding="utf-8") as f:
            lines = [l for l in f if "jit_second" in l]
        first_field = {int(l.split()[0], 16) for l in lines}
        # Two places: the anonymous mapping, then the moved copy.
        self.assertGreaterEqual(len({a >> 12 for a in first_field}), 2, addresses)

    def test_perf_map_names_the_rest_and_tiers_can_be_stripped(self):
        # Folded stacks drop everything from a name's first "(" (as
        # stackcollapse-perf.pl does), so the tier shows in perf_script.out.
        def script(run):
            with open(os.path.join(run, "perf_script.out"), encoding="utf-8") as f:
                return f.read()
        # Without the return type the map puts first, the method before its
        # assembly (symbolize/dotnet_names.h).
        self.assertRegex(script(self.run_dir),
                         r"\t *[0-9a-f]+ App\.Worker::Spin\(\)\[OptimizedTier1\] \[App\]\+0x")
        stripped = postprocess_copy(self.run_dir, os.path.join(self.tmp.path, "stripped"),
                                    ["-strip-tiers"])
        self.assertNotIn("[OptimizedTier1]", script(stripped))
        self.assertRegex(script(stripped), r"\t *[0-9a-f]+ App\.Worker::Spin\(\) \[App\]\+0x")

    def test_archive_keeps_the_jit_files_and_replays_them(self):
        with tarfile.open(os.path.join(self.run_dir, "prof.tar.gz")) as archive:
            names = archive.getnames()
        self.assertTrue(any(re.fullmatch(r"jit/jit-\d+\.dump", n) for n in names), names)
        self.assertTrue(any(re.fullmatch(r"jit/perf-\d+\.map", n) for n in names), names)
        laptop = postprocess_copy(self.run_dir, os.path.join(self.tmp.path, "laptop"))
        self.assertEqual(folded(laptop), folded(self.run_dir))


class NodePerfProfTest(unittest.TestCase):
    """A real jitdump: node --perf-prof writes jit-PID.dump in its working
    directory (with --perf-prof-unwinding-info, UNWINDING_INFO records too)."""

    def test_node_jitdump_names_javascript(self):
        node = shutil.which("node") or shutil.which("nodejs")
        self.assertIsNotNone(node, "Node.js is required (scripts/setup.sh installs it)")
        tmp = t.TempDir()
        try:
            work = os.path.join(tmp.path, "work")
            os.makedirs(work)
            cwd = os.getcwd()
            os.chdir(work)  # node writes jit-PID.dump and an isolate log here
            try:
                run = record(tmp.path, [node, "--perf-prof", "--perf-prof-unwinding-info",
                                        t.fixture_source("recursive.js"), "3"])
            finally:
                os.chdir(cwd)
            stacks = folded(run)
            fraction, total = share(stacks, has("JS:") , lambda s: True)
            fib, _ = share(stacks, has("fibonacciRecursive"), lambda s: True)
            self.assertGreater(total, 50)
            self.assertGreater(fib, 0.5, f"fibonacciRecursive in {fib:.2f} of {total} samples")
            with tarfile.open(os.path.join(run, "prof.tar.gz")) as archive:
                self.assertTrue(any(re.fullmatch(r"jit/jit-\d+\.dump", n)
                                    for n in archive.getnames()))
            laptop = postprocess_copy(run, os.path.join(tmp.path, "laptop"))
            self.assertEqual(folded(laptop), stacks)
        finally:
            tmp.cleanup()


if __name__ == "__main__":
    unittest.main()


def write_names(directory, file_name, names):
    """A file of NUL-separated names, as fake_jit reads them."""
    path = os.path.join(directory, file_name)
    with open(path, "wb") as f:
        f.write(b"".join(n.encode() + b"\0" for n in names))
    return path


def warnings_of(run_dir):
    return t.read_metadata(run_dir)["warnings"]


class PerfMapRemovedAtExitTest(unittest.TestCase):
    """A JIT runtime that removes its perf map when it exits, as runtimes and
    short-lived containers do: profcpu copies the map while the process runs
    (collector/perf_map_tailer.h), so both the method named from the start
    and the one named a second in are named, and the copy is kept."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        first = write_names(cls.tmp.path, "first", ["jit_named_at_start"])
        late = write_names(cls.tmp.path, "late", ["jit_named_one_second_in"])
        cls.run_dir = record(os.path.join(cls.tmp.path, "out"),
                             [t.fixture("fake_jit"), "--regions", "2", "--perf-map", first,
                              "--perf-map-late", late,
                              "--exit-after", "3", "--unlink-perf-map"], freq=299)
        cls.pid = t.read_metadata(cls.run_dir)["processes"][0]["pid"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_process_removed_its_map(self):
        # Otherwise the test proves nothing.
        self.assertFalse(os.path.exists(f"/tmp/perf-{self.pid}.map"))

    def test_both_functions_are_named(self):
        stacks = folded(self.run_dir)
        start, total = share(stacks, has("jit_named_at_start"), lambda s: True)
        late, _ = share(stacks, has("jit_named_one_second_in"), lambda s: True)
        print(f"\nperf map removed at exit: {total} samples, {start:.2f} named at start, "
              f"{late:.2f} named one second in", flush=True)
        # Two regions, run in turn: each about half of the samples.
        self.assertGreater(start, 0.35)
        self.assertGreater(late, 0.35)

    def test_the_copy_is_in_the_run_folder_and_the_archive(self):
        copy = os.path.join(self.run_dir, "jit", f"perf-{self.pid}.map")
        with open(copy, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("jit_named_at_start", text)
        self.assertIn("jit_named_one_second_in", text)
        self.assertFalse(os.path.exists(copy + ".partial"))
        with tarfile.open(os.path.join(self.run_dir, "prof.tar.gz")) as archive:
            self.assertIn(f"jit/perf-{self.pid}.map", archive.getnames())
        with open(os.path.join(self.run_dir, "profcpu.log"), encoding="utf-8") as f:
            self.assertIn("it was gone from its path by the end", f.read())

    def test_no_warning_about_the_map(self):
        for warning in warnings_of(self.run_dir):
            self.assertNotIn("perf-", warning)


class PerfMapNeverWrittenTest(unittest.TestCase):
    def test_warning_says_it_was_never_written(self):
        """JIT code and no perf map at all: the warning says profcpu looked
        while the process ran and found none, rather than guessing."""
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        run = record(tmp.path, [t.fixture("fake_jit"), "--exit-after", "1.5"])
        pid = t.read_metadata(run)["processes"][0]["pid"]
        warnings = " ".join(warnings_of(run))
        self.assertIn(f"pid {pid} ran JIT code but profcpu found no /tmp/perf-{pid}.map of it "
                      "at any look while it ran", warnings)
        self.assertFalse(os.path.exists(os.path.join(run, "jit", f"perf-{pid}.map")))


class NodeInShortLivedContainerTest(unittest.TestCase):
    """node --perf-basic-prof keeps its map at exit, but a short-lived
    container takes its /tmp with it: node in a mount namespace of its own
    with a private /tmp, gone when node exits, before profcpu symbolizes."""

    def test_node_names_survive_its_tmp(self):
        node = shutil.which("node") or shutil.which("nodejs")
        self.assertIsNotNone(node, "Node.js is required (scripts/setup.sh installs it)")
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        script = "mount -t tmpfs tmpfs /tmp && cd / && exec {node} --perf-basic-prof {js} 3".format(
            node=node, js=t.fixture_source_outside_tmp("recursive.js"))
        run = record(tmp.path, ["unshare", "--mount", "--propagation", "private",
                                "sh", "-c", script])
        pid = t.read_metadata(run)["processes"][0]["pid"]
        self.assertFalse(os.path.exists(f"/tmp/perf-{pid}.map"))  # the host's /tmp never had it
        stacks = folded(run)
        fib, total = share(stacks, has("fibonacciRecursive"), lambda s: True)
        print(f"\nnode in a private /tmp: fibonacciRecursive in {fib:.2f} of {total} samples",
              flush=True)
        self.assertGreater(total, 50)
        self.assertGreater(fib, 0.5)
        self.assertTrue(os.path.exists(os.path.join(run, "jit", f"perf-{pid}.map")))
