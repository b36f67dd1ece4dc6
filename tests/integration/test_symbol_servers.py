"""Symbols from servers (issue 17) through the real binary, with real servers
on loopback: Debian's debuginfod indexing a folder that holds a stripped
library's debug file, an SSQP layout served by python's http.server, and
servers that misbehave (the wrong file, 404, no answer, a 2 GB body).

The program (symsrv_app) runs the stripped libsymsrv.so, copied alone into a
folder: no debug file anywhere, so its static hot function, SymsrvHot, is
unknown in the recording. Each test postprocesses a copy of the run's
prof.tar.gz (as on a laptop) with a server and a cache of its own, and looks
at folded_stacks.out, metadata.json's symbol_fetch, profcpu.log and the
cache. Everything has a bound: a hang fails a test, it does not block CI.

Every server listens on 127.0.0.1 only and is stopped by pid when its test
ends, passed or not (symbol_servers.py)."""

import json
import os
import re
import shutil
import subprocess
import time
import unittest

import profcpu_testing as t
import symbol_servers as servers

PROFCPU_TIMEOUT = 60      # seconds for any profcpu command here: a hang fails the test
# -symbol-timeout 3 against a server that never answers: "given up after
# about that long per file", plus slack for a loaded 2-core machine.
SILENT_TIMEOUT = 3
SILENT_SLACK = 5
HOT = "symsrv::SymsrvHot"
EXPORTED = "symsrv_work"
COMM = "symsrv_app"


def symfix(name):
    return t.fixture(os.path.join("symbols", name))


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True,
                         timeout=30).stdout
    match = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not match:
        raise AssertionError(f"{path} has no build-id")
    return match.group(1)


def cache_path(cache, hex_id):
    """Where the contract puts a fetched debug file: CACHE/.build-id/xx/rest.debug."""
    return os.path.join(cache, ".build-id", hex_id[:2], hex_id[2:] + ".debug")


def files_under(folder):
    found = []
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found.append((path, os.path.getsize(path)))
    return found


def folded(run_dir):
    return t.read_folded(os.path.join(run_dir, "folded_stacks.out"))


def program_share(stacks, frame_part):
    """Fraction of symsrv_app's samples with a frame containing frame_part."""
    mine = {s: c for s, c in stacks.items() if s and s[0] == COMM}
    total = sum(mine.values())
    hit = sum(c for s, c in mine.items() if any(frame_part in f for f in s))
    return (hit / total if total else 0.0), total


class SymbolServerTest(unittest.TestCase):
    """One recording of symsrv_app running the stripped library; every test
    postprocesses its own copy."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        cls.addClassCleanup(cls.tmp.cleanup)  # also when the recording fails
        cls.library_build = symfix("libsymsrv.so")
        cls.debug_file = symfix("libsymsrv.so.debug")
        cls.other_debug_file = symfix("libsymsrv_other.so.debug")
        cls.hex_id = build_id(cls.library_build)
        if build_id(cls.debug_file) != cls.hex_id:
            raise AssertionError("libsymsrv.so.debug is not libsymsrv.so's debug file")
        if build_id(cls.other_debug_file) == cls.hex_id:
            raise AssertionError("libsymsrv_other.so.debug must have another build-id")
        # The folder holding only the stripped library: no debug file there,
        # no debuglink in it, nothing under /usr/lib/debug.
        app = os.path.join(cls.tmp.path, "app")
        os.makedirs(app)
        cls.library = shutil.copy(cls.library_build, app)
        cls.run_dir = cls.record_run(os.path.join(cls.tmp.path, "out"), [],
                                    base_env(cls.tmp.path))

    @classmethod
    def record_run(cls, out_dir, extra, env):
        result = run([t.PROFCPU, "record", "-freq", "199", "-out", out_dir, *extra, "--",
                      symfix("symsrv_app"), "2", cls.library], env)
        if result.returncode != 0:
            raise AssertionError(f"profcpu record failed with {result.returncode}:\n"
                                 f"{result.stdout}\n{result.stderr}")
        run_dir = result.stdout.strip().splitlines()[-1]
        if not os.path.isdir(run_dir):
            raise AssertionError(f"profcpu printed {run_dir!r}; stderr:\n{result.stderr}")
        return run_dir

    def setUp(self):
        self.work = t.TempDir()
        self.addCleanup(self.work.cleanup)
        self.env = base_env(self.work.path)
        self.copies = 0

    # --- helpers ------------------------------------------------------------

    def path(self, *parts):
        return os.path.join(self.work.path, *parts)

    def postprocess(self, extra=(), env=None, netns=None, timeout=PROFCPU_TIMEOUT):
        """postprocess on a folder holding only the run's prof.tar.gz (as on a
        laptop); returns (folder, seconds, result)."""
        self.copies += 1
        dest = self.path(f"copy{self.copies}")
        os.makedirs(dest)
        shutil.copy(os.path.join(self.run_dir, "prof.tar.gz"), dest)
        argv = [t.PROFCPU, "postprocess", "-dir", dest, *extra]
        if netns is not None:
            argv = netns.argv(*argv)
        started = time.monotonic()
        result = run(argv, env if env is not None else self.env, timeout)
        seconds = time.monotonic() - started
        if result.returncode != 0:
            self.fail(f"{' '.join(argv)} failed with {result.returncode}:\n{result.stderr}")
        return dest, seconds, result

    def symbols(self, run_dir, extra=(), env=None):
        argv = [t.PROFCPU, "symbols", "-dir", run_dir, *extra]
        result = run(argv, env if env is not None else self.env)
        self.assertEqual(result.returncode, 0,
                         f"{' '.join(argv)} exited {result.returncode}:\n"
                         f"{result.stdout}\n{result.stderr}")
        return result.stdout

    def ssqp_server(self, name, debug_file=None):
        directory = self.path(name)
        os.makedirs(directory)
        if debug_file:
            servers.ssqp_layout(directory, self.hex_id, debug_file)
        return servers.start_http_server(self, directory, self.path(name + ".log"))

    def assert_named(self, run_dir):
        stacks = folded(run_dir)
        fraction, total = program_share(stacks, HOT)
        self.assertGreater(total, 100, f"too few samples of {COMM}")
        self.assertGreater(fraction, 0.5, f"{HOT} in {fraction:.2f} of {total} samples of {COMM}")
        self.assertTrue(any(EXPORTED in s[i] and HOT in s[i + 1]
                            for s in stacks for i in range(len(s) - 1)),
                        f"no stack has {EXPORTED} calling {HOT}")

    def assert_unknown(self, run_dir):
        stacks = folded(run_dir)
        self.assertEqual(program_share(stacks, HOT)[0], 0.0, f"{HOT} named")
        # The library was sampled all the same: its exported function is named.
        fraction, total = program_share(stacks, EXPORTED)
        self.assertGreater(fraction, 0.5, f"{EXPORTED} in {fraction:.2f} of {total} samples")

    def assert_silent_server_bounded(self, run_dir, seconds):
        """-symbol-timeout 3 against a server that never answers: about 3 s
        per file asked for. The run's library is one; libc or the vdso are
        asked for too when the recording happened to sample them unnamed."""
        asked = [e for e in t.read_metadata(run_dir).get("symbol_fetch", []) if e.get("tried")]
        self.assertGreaterEqual(len(asked), 1, "no file was asked for")
        bound = SILENT_TIMEOUT * len(asked) + SILENT_SLACK
        self.assertLess(seconds, bound, "postprocess waited too long on a server that never "
                        f"answers, with -symbol-timeout {SILENT_TIMEOUT}: {seconds:.1f} s for "
                        f"{len(asked)} files:\n{json.dumps(asked, indent=1)}")

    def fetch_entry(self, run_dir):
        meta = t.read_metadata(run_dir)
        self.assertIn("symbol_fetch", meta, f"metadata.json has no symbol_fetch: {sorted(meta)}")
        entries = [e for e in meta["symbol_fetch"] if e.get("module") == self.library]
        self.assertEqual(len(entries), 1,
                         f"symbol_fetch has no single entry for {self.library}:\n"
                         f"{json.dumps(meta['symbol_fetch'], indent=1)}")
        entry = entries[0]
        self.assertEqual(entry.get("build_id", "").lower(), self.hex_id, entry)
        for key in ("status", "source", "tried"):
            self.assertIn(key, entry)
        return entry

    def assert_status(self, run_dir, status):
        entry = self.fetch_entry(run_dir)
        self.assertEqual(entry["status"], status, entry)
        return entry

    def assert_not_found(self, run_dir, server_url, *reasons):
        """status not_found, the server tried, its result holding one of REASONS."""
        entry = self.fetch_entry(run_dir)
        self.assertEqual(entry["status"], "not_found", entry)
        self.assertEqual(entry["source"], "", entry)
        results = [r.get("result", "") for r in entry["tried"]
                   if r.get("server", "").rstrip("/") == server_url]
        self.assertEqual(len(results), 1, f"{server_url} not in tried once: {entry}")
        self.assertTrue(any(reason in results[0].lower() for reason in reasons),
                        f"result {results[0]!r} says none of {reasons}")
        self.assert_logged(run_dir)
        return entry

    def assert_logged(self, run_dir):
        with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8", errors="replace") as f:
            lines = [line for line in f if self.library in line and self.hex_id in line.lower()]
        self.assertTrue(lines, f"profcpu.log names no {self.library} with {self.hex_id}")

    def assert_cached(self, cache):
        kept = cache_path(cache, self.hex_id)
        self.assertTrue(os.path.isfile(kept), f"{kept} is missing; cache: {files_under(cache)}")
        self.assertEqual(build_id(kept), self.hex_id)

    def assert_nothing_kept(self, cache):
        self.assertFalse(os.path.exists(cache_path(cache, self.hex_id)),
                         f"{cache_path(cache, self.hex_id)} kept")
        big = [(p, size) for p, size in files_under(cache) if size > 1024 * 1024]
        self.assertEqual(big, [], "large files left in the cache")

    # --- the recording ------------------------------------------------------

    def assert_replayed_once(self, run_dir):
        """The fetched debug file renamed the frames: the recording was
        replayed once, not again after the fetch."""
        with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8", errors="replace") as f:
            log = f.read()
        # The log came in the archive: postprocess's lines follow its command line.
        lines = log.splitlines()
        starts = [i for i, line in enumerate(lines) if ": profcpu postprocess" in line]
        self.assertTrue(starts, log)
        own = lines[starts[-1]:]
        self.assertTrue(any("naming frames again with the fetched debug files" in line
                            for line in own), log)
        replays = [line for line in own if "replayed " in line and " samples, " in line]
        self.assertEqual(len(replays), 1, "\n".join(replays))

    def test_recorded_run_has_the_hot_function_unknown(self):
        self.assert_unknown(self.run_dir)
        by_module = t.read_metadata(self.run_dir)["symbols"]["unknown_frames_by_module"]
        self.assertIn(self.library, by_module)
        self.assertFalse(t.read_metadata(self.run_dir).get("symbol_fetch"),
                         "record fetched without -fetch-symbols")
        # And with no server at all, postprocess leaves it so.
        bare, _, _ = self.postprocess(["-symbol-cache", self.path("cache")])
        self.assert_unknown(bare)

    # --- debuginfod ---------------------------------------------------------

    def test_debuginfod_server_names_the_static_function(self):
        netns = servers.NetNamespace(self)
        indexed = self.path("debuginfod-files")
        os.makedirs(indexed)
        shutil.copy(self.debug_file, indexed)
        server = servers.start_debuginfod(self, netns, indexed, self.work.path, self.hex_id)
        cache = self.path("cache")
        env = dict(self.env, DEBUGINFOD_URLS=server.url)
        laptop, _, _ = self.postprocess(["-symbol-cache", cache], env=env, netns=netns)
        self.assert_named(laptop)
        entry = self.fetch_entry(laptop)
        self.assertEqual(entry["status"], "fetched", entry)
        self.assertIn(f"127.0.0.1:{servers.DEBUGINFOD_PORT}", entry["source"], entry)
        self.assert_cached(cache)
        self.assert_logged(laptop)
        self.assert_replayed_once(laptop)
        self.assertIn(f"/buildid/{self.hex_id}/debuginfo", server.log_text())
        # Later, with no server at all: the cache names it.
        server.stop()
        offline, _, _ = self.postprocess(["-symbol-cache", cache])
        self.assert_named(offline)

    def test_debuginfod_url_that_never_answers_is_bounded(self):
        silent = servers.start_silent_server(self, self.path("silent.log"))
        env = dict(self.env, DEBUGINFOD_URLS=silent.url)
        cache = self.path("cache")
        laptop, seconds, _ = self.postprocess(["-symbol-cache", cache, "-symbol-timeout", "3"],
                                              env=env)
        # About 3 s a file, not DEBUGINFOD_TIMEOUT's default 90 s, nor 3 s
        # per retry (libdebuginfod's DEBUGINFOD_RETRY_LIMIT).
        self.assert_silent_server_bounded(laptop, seconds)
        entry = self.fetch_entry(laptop)
        self.assertEqual(entry["status"], "not_found", entry)
        self.assertGreaterEqual(silent.log_text().count("accepted"), 2,
                                "profcpu never connected to DEBUGINFOD_URLS")
        self.assert_unknown(laptop)

    # --- SSQP ---------------------------------------------------------------

    def test_ssqp_server_names_the_static_function(self):
        server = self.ssqp_server("ssqp", self.debug_file)
        cache = self.path("cache")
        laptop, _, _ = self.postprocess(["-symbol-server", server.url, "-symbol-cache", cache])
        self.assert_named(laptop)
        entry = self.fetch_entry(laptop)
        self.assertEqual(entry["status"], "fetched", entry)
        self.assertEqual(entry["source"].rstrip("/"), server.url, entry)
        self.assert_cached(cache)
        self.assert_logged(laptop)
        key = servers.ssqp_key(self.hex_id)
        self.assertIn(f'"GET /{key} HTTP/1.1" 200', server.log_text())
        # With the server still there, the cache answers: no second request.
        # (The cache is searched like a -symbols DIR before anything is
        # fetched, so the module has no unknown frames left and may well be
        # absent from symbol_fetch; if listed, it is as cached.)
        again, _, _ = self.postprocess(["-symbol-server", server.url, "-symbol-cache", cache])
        self.assert_named(again)
        listed = [e for e in t.read_metadata(again).get("symbol_fetch", [])
                  if e.get("module") == self.library]
        self.assertTrue(all(e["status"] == "cached" for e in listed), listed)
        self.assertEqual(server.log_text().count(f"GET /{key}"), 1, server.log_text())
        # Later, with no server at all: the cache names it.
        server.stop()
        offline, _, _ = self.postprocess(["-symbol-cache", cache])
        self.assert_named(offline)

    def test_ssqp_servers_are_tried_in_order(self):
        empty = self.ssqp_server("empty")
        full = self.ssqp_server("full", self.debug_file)
        laptop, _, _ = self.postprocess(["-symbol-server", empty.url, "-symbol-server", full.url,
                                         "-symbol-cache", self.path("cache")])
        self.assert_named(laptop)
        entry = self.fetch_entry(laptop)
        self.assertEqual(entry["status"], "fetched", entry)
        self.assertEqual(entry["source"].rstrip("/"), full.url, entry)
        first = [r for r in entry["tried"] if r.get("server", "").rstrip("/") == empty.url]
        self.assertTrue(first and "404" in first[0].get("result", ""), entry)

    def test_default_cache_is_under_xdg_cache_home(self):
        server = self.ssqp_server("ssqp", self.debug_file)
        laptop, _, _ = self.postprocess(["-symbol-server", server.url])
        self.assert_named(laptop)
        self.assert_cached(os.path.join(self.env["XDG_CACHE_HOME"], "profcpu", "symbols"))

    def test_wrong_build_id_is_not_kept(self):
        # The same library from another build: its names would fit the
        # addresses, only its build-id says it is not this library's.
        server = self.ssqp_server("ssqp", self.other_debug_file)
        cache = self.path("cache")
        laptop, _, _ = self.postprocess(["-symbol-server", server.url, "-symbol-cache", cache])
        self.assert_not_found(laptop, server.url, "build-id", "build id")
        self.assert_unknown(laptop)
        self.assert_nothing_kept(cache)
        self.assertEqual(files_under(cache), [], "the wrong file was kept in the cache")

    def test_404_is_not_found(self):
        server = self.ssqp_server("empty")
        cache = self.path("cache")
        laptop, _, _ = self.postprocess(["-symbol-server", server.url, "-symbol-cache", cache])
        self.assert_not_found(laptop, server.url, "404")
        self.assert_unknown(laptop)
        self.assert_nothing_kept(cache)
        self.assertIn(f"GET /{servers.ssqp_key(self.hex_id)}", server.log_text())

    def test_server_that_never_answers_is_given_up(self):
        silent = servers.start_silent_server(self, self.path("silent.log"))
        accepted_before = silent.log_text().count("accepted")
        cache = self.path("cache")
        laptop, seconds, _ = self.postprocess(["-symbol-server", silent.url, "-symbol-cache", cache,
                                               "-symbol-timeout", "3"])
        self.assert_silent_server_bounded(laptop, seconds)
        self.assertGreater(silent.log_text().count("accepted"), accepted_before,
                           "profcpu never connected")
        self.assert_not_found(laptop, silent.url, "timed out", "timeout")
        self.assert_unknown(laptop)
        self.assert_nothing_kept(cache)

    def huge_body(self, chunked, prefix=None, debuginfod=False):
        """A 2 GB body, from an SSQP server or from DEBUGINFOD_URLS, with
        -symbol-max-mb 16: abandoned, nothing kept, the frame unknown."""
        huge = servers.start_huge_server(self, self.path("huge.log"), 2 * 1024 ** 3,
                                         chunked=chunked, prefix=prefix)
        cache = self.path("cache")
        flags = ["-symbol-cache", cache, "-symbol-max-mb", "16", "-symbol-timeout", "20"]
        if debuginfod:
            laptop, seconds, _ = self.postprocess(flags, env=dict(self.env,
                                                                  DEBUGINFOD_URLS=huge.url))
            entry = self.fetch_entry(laptop)
            self.assertEqual(entry["status"], "not_found", entry)
            tried = " ".join(r.get("result", "") for r in entry["tried"])
            self.assertTrue("too large" in tried or "size" in tried, tried)
        else:
            laptop, seconds, _ = self.postprocess(["-symbol-server", huge.url, *flags])
            self.assert_not_found(laptop, huge.url, "too large", "size")
        self.assertLess(seconds, 30, "postprocess read the 2 GB body")
        self.assert_unknown(laptop)
        self.assert_nothing_kept(cache)
        big = [(p, size) for p, size in files_under(self.env["DEBUGINFOD_CACHE_PATH"])
               if size > 16 * 1024 ** 2]
        self.assertEqual(big, [], "libdebuginfod's cache kept the body")
        # The server logs each answer when the client hangs up: profcpu must
        # have stopped reading, not taken the 2 GB and thrown them away.
        self.assertTrue(t.wait_for(lambda: " sent " in huge.log_text(), timeout=10),
                        "the huge-body server was never asked, or is still sending")
        sent = [int(n) for n in re.findall(r" sent (\d+) bytes", huge.log_text())]
        self.assertLess(max(sent), 256 * 1024 ** 2, huge.log_text())
        self.assertNotIn("complete", huge.log_text())

    def test_2gb_body_with_a_length_is_abandoned(self):
        self.huge_body(chunked=False)

    def test_2gb_chunked_body_starting_with_the_right_file_is_abandoned(self):
        # The first bytes are the very debug file (its build-id fits): a
        # client that kept the first 16 MB, or the whole body, would keep a
        # file that passes the build-id check.
        self.huge_body(chunked=True, prefix=self.debug_file)

    def test_2gb_body_from_debuginfod_url_is_abandoned(self):
        self.huge_body(chunked=False, debuginfod=True)

    def test_2gb_chunked_body_from_debuginfod_url_is_abandoned(self):
        # No Content-Length: libdebuginfod's DEBUGINFOD_MAXSIZE alone does not
        # stop it (it checks the announced size), so -symbol-max-mb must.
        self.huge_body(chunked=True, prefix=self.debug_file, debuginfod=True)

    # --- profcpu symbols ----------------------------------------------------

    def module_line(self, output):
        lines = [line for line in output.splitlines() if self.library in line]
        self.assertEqual(len(lines), 1, f"not one line for {self.library}:\n{output}")
        self.assertIn(self.hex_id, lines[0].lower(), output)
        return lines[0]

    def test_symbols_command_lists_then_fetches(self):
        run_dir = shutil.copytree(self.run_dir, self.path("run"))
        cache = self.path("cache")
        server = self.ssqp_server("ssqp", self.debug_file)
        listed = self.symbols(run_dir, ["-symbol-cache", cache, "-no-fetch",
                                        "-symbol-server", server.url])
        line = self.module_line(listed)
        self.assertIn("not in cache", line, listed)
        count = t.read_metadata(self.run_dir)["symbols"]["unknown_frames_by_module"][self.library]
        self.assertRegex(line, rf"\b{count}\b", f"{count} unknown frames not in the line")
        self.assertEqual(files_under(cache) if os.path.isdir(cache) else [], [])
        self.assertNotIn("GET /", server.log_text(), "-no-fetch asked the server")

        fetched = self.symbols(run_dir, ["-symbol-server", server.url, "-symbol-cache", cache])
        self.assertIn(f"fetched from {server.url}", self.module_line(fetched), fetched)
        self.assert_cached(cache)
        cached = self.symbols(run_dir, ["-symbol-cache", cache, "-no-fetch"])
        self.assertIn("cached", self.module_line(cached), cached)

        # A plain postprocess, no server, names it from that cache.
        server.stop()
        laptop, _, _ = self.postprocess(["-symbol-cache", cache])
        self.assert_named(laptop)

    def test_symbols_command_says_why_not_found(self):
        run_dir = shutil.copytree(self.run_dir, self.path("run"))
        server = self.ssqp_server("empty")
        output = self.symbols(run_dir, ["-symbol-server", server.url,
                                        "-symbol-cache", self.path("cache")])
        self.assertIn("not found", self.module_line(output), output)
        self.assertIn(server.url, output)
        self.assertIn("404", output)

    def test_symbols_command_module_without_build_id(self):
        # symfix_nobid_stripped alone: no build-id, no debug file beside it.
        app = self.path("nobid")
        os.makedirs(app)
        binary = shutil.copy(symfix("symfix_nobid_stripped"), app)
        result = run([t.PROFCPU, "record", "-freq", "199", "-out", self.path("out"), "--",
                      binary, "1"], self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        run_dir = result.stdout.strip().splitlines()[-1]
        server = self.ssqp_server("ssqp", self.debug_file)
        output = self.symbols(run_dir, ["-symbol-server", server.url,
                                        "-symbol-cache", self.path("cache")])
        lines = [line for line in output.splitlines() if binary in line]
        self.assertEqual(len(lines), 1, output)
        self.assertIn("no build-id", lines[0], output)
        # Other modules the run touched (libc, the vdso) may be asked for by their build-ids,
        # depending on where the samples fell; nothing may be asked without one.
        others = "\n".join(line for line in output.splitlines() if binary not in line).lower()
        for asked in re.findall(r'"GET (\S+)', server.log_text()):
            build_id = re.search(r"elf-buildid-sym-([0-9a-f]*)/", asked)
            self.assertTrue(build_id and build_id.group(1), f"asked {asked} without a build-id")
            self.assertIn(build_id.group(1), others,
                          f"asked {asked}, for no module listed other than {binary}:\n{output}")

    # --- record -fetch-symbols ----------------------------------------------

    def test_record_fetches_only_when_asked(self):
        server = self.ssqp_server("ssqp", self.debug_file)
        # The same folder also in debuginfod's layout (/buildid/ID/debuginfo),
        # so DEBUGINFOD_URLS can point at it too.
        debuginfod_layout = self.path("ssqp", "buildid", self.hex_id)
        os.makedirs(debuginfod_layout)
        shutil.copy(self.debug_file, os.path.join(debuginfod_layout, "debuginfo"))
        env = dict(self.env, DEBUGINFOD_URLS=server.url)
        plain = self.record_run(self.path("plain"), [], env)
        self.assert_unknown(plain)
        self.assertNotIn("GET /", server.log_text(), "record fetched without -fetch-symbols")
        self.assertEqual(files_under(self.env["XDG_CACHE_HOME"]), [], "record filled a cache")
        cache = self.path("cache")

        fetching = self.record_run(self.path("fetching"),
                                   ["-fetch-symbols", "-symbol-server", server.url,
                                    "-symbol-cache", cache], self.env)
        self.assert_named(fetching)
        self.assert_status(fetching, "fetched")
        self.assert_cached(cache)

    def test_collect_fetches_when_asked(self):
        server = self.ssqp_server("ssqp", self.debug_file)
        cache = self.path("cache")
        proc = subprocess.Popen([symfix("symsrv_app"), "6", self.library],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(t.stop, proc)
        time.sleep(0.3)
        result = run([t.PROFCPU, "collect", "-pid", str(proc.pid), "-duration", "1.5",
                      "-freq", "199", "-out", self.path("out"), "-fetch-symbols",
                      "-symbol-server", server.url, "-symbol-cache", cache], self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        run_dir = result.stdout.strip().splitlines()[-1]
        self.assert_named(run_dir)
        self.assert_status(run_dir, "fetched")
        self.assert_cached(cache)


def base_env(home):
    """The environment of every profcpu here: no DEBUGINFOD_URLS from the
    machine (Debian's profile sets one), and the caches profcpu and
    libdebuginfod fall back to in the test's folder, never in ~/.cache."""
    env = dict(os.environ)
    env.pop("DEBUGINFOD_URLS", None)
    env["XDG_CACHE_HOME"] = os.path.join(home, "xdg-cache")
    env["DEBUGINFOD_CACHE_PATH"] = os.path.join(home, "debuginfod-cache")
    return env


def run(argv, env, timeout=PROFCPU_TIMEOUT):
    try:
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{' '.join(argv)} did not finish within {timeout} s:\n"
                             f"{e.stderr}") from None


if __name__ == "__main__":
    unittest.main()
