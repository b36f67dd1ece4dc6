"""A hostile target: profcpu runs privileged next to a process that may be
compromised, and reads files that process controls. Each test plants
something in a real target (tests/fixtures/fake_jit.cc, a stand-in for a JIT
runtime) and checks that profcpu reads nothing outside the target's root,
stays within bounded memory and time, and escapes what it writes."""

import collections
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET

import profcpu_testing as t

JIT_BASE = 0x7E0000000000  # fake_jit's region 0; region i is 4 KiB further

# Names a compromised target might give its code.
HOSTILE_MAP_NAMES = [
    '<script>alert("perf map")</script>',
    '</text></g><g onload="alert(1)"><text>',
    "\"quoted' &amp; <!-- ]]> <![CDATA[ x",
    b"bad utf8 \xff\xfe \xc3( end".decode("utf-8", "surrogateescape"),
    "carriage\rreturn",
    "semi;colon (paren) [bracket]",
]
HOSTILE_DUMP_NAMES = [
    "new\nline <svg onload=alert(2)>",
    "tab\tand\x1bescape",
]


def encode_names(names):
    return b"\0".join(n.encode("utf-8", "surrogateescape") for n in names) + b"\0"


def write_names(directory, names):
    path = os.path.join(directory, "names")
    with open(path, "wb") as f:
        f.write(encode_names(names))
    return path


def start_fake_jit(argv, **kwargs):
    """Starts fake_jit (argv may begin with a wrapper such as unshare) and
    returns (process, pid) once it printed "ready PID BASE"."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    line = proc.stdout.readline().decode()
    if not line.startswith("ready "):
        proc.kill()
        raise AssertionError(f"fake_jit did not start: {line!r} {proc.stderr.read()!r}")
    return proc, int(line.split()[1])


def stop(proc):
    t.stop(proc)
    proc.stdout.close()
    proc.stderr.close()


def remove_jit_files(pid):
    for name in (f"/tmp/perf-{pid}.map", f"/tmp/jit-{pid}.dump"):
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass


def collect_in(pid, out_dir, cwd, duration=2):
    """Runs profcpu collect from the folder `cwd`; returns the run folder."""
    result = subprocess.run([t.PROFCPU, "collect", "-pid", str(pid), "-duration", str(duration),
                             "-freq", "199", "-out", out_dir],
                            capture_output=True, text=True, errors="replace", cwd=cwd,
                            timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"profcpu failed ({result.returncode}):\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1]


def peak_rss_mib(argv, timeout=300, cwd=None):
    """Runs argv to completion; returns (returncode, stdout, stderr, peak RSS
    in MiB, seconds), the RSS measured for this child alone (wait4)."""
    began = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    out_chunks, err_chunks = [], []
    # Drain pipes in threads so a chatty child cannot block, then wait4 it.
    readers = [threading.Thread(target=lambda s=s, c=c: c.append(s.read()))
               for s, c in ((proc.stdout, out_chunks), (proc.stderr, err_chunks))]
    for r in readers:
        r.start()
    deadline = began + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"{argv[:2]} did not finish in {timeout}s")
        time.sleep(0.05)
    for r in readers:
        r.join()
    proc.stdout.close()
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (proc.returncode, out_chunks[0].decode("utf-8", "replace"),
            err_chunks[0].decode("utf-8", "replace"), usage.ru_maxrss / 1024.0,
            time.monotonic() - began)


def all_output_bytes(run_dir):
    """Every byte profcpu wrote for the run: its files, jit/ copies, and the
    contents of prof.tar.gz."""
    chunks = []
    for dirpath, _, files in os.walk(run_dir):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as f:
                chunks.append(f.read())
    archive = os.path.join(run_dir, "prof.tar.gz")
    if os.path.exists(archive):
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    chunks.append(tar.extractfile(member).read())
    return b"\n".join(chunks)


class SymlinkEscapeTest(unittest.TestCase):
    """The target, in a mount namespace of its own with a private /tmp, makes
    /tmp/perf-PID.map a symlink to a file of the host's, or through
    /proc/self/... to the profiler's own files. A naive reader of
    /proc/PID/root/tmp/perf-PID.map follows it (absolute links resolve against
    the reader's root); profcpu resolves inside the target's root
    (openat2 RESOLVE_IN_ROOT) and must read none of them."""

    def setUp(self):
        # The host's secret, hidden from the target by a tmpfs mounted over
        # its folder in the target's namespace.
        self.host_dir = tempfile.mkdtemp(prefix="profcpu-host-", dir="/var/tmp")
        self.addCleanup(shutil.rmtree, self.host_dir, True)
        with open(os.path.join(self.host_dir, "secret.map"), "w") as f:
            for i in range(8):
                f.write(f"{JIT_BASE + i * 4096:x} 40 HOST_SECRET_SYMBOL_{i}\n")
        # profcpu's own working folder, reachable through /proc/self/cwd.
        self.profcpu_cwd = tempfile.mkdtemp(prefix="profcpu-cwd-")
        self.addCleanup(shutil.rmtree, self.profcpu_cwd, True)
        with open(os.path.join(self.profcpu_cwd, "secret.map"), "w") as f:
            for i in range(8):
                f.write(f"{JIT_BASE + i * 4096:x} 40 PROFCPU_CWD_SECRET_{i}\n")
        self.out = t.TempDir()
        self.addCleanup(self.out.cleanup)

    def start_target(self, link_target):
        script = ("mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs {host} && "
                  "ln -s '{link}' /tmp/perf-$$.map && exec {fixture} --regions 4").format(
                      host=self.host_dir, link=link_target, fixture=t.fixture_outside_tmp("fake_jit"))
        proc, pid = start_fake_jit(["unshare", "--mount", "--propagation", "private",
                                    "sh", "-c", script])
        self.addCleanup(stop, proc)
        return pid

    def check_no_leak(self, link_target, naive_leaks):
        pid = self.start_target(link_target)
        naive_path = f"/proc/{pid}/root/tmp/perf-{pid}.map"
        self.assertEqual(os.readlink(naive_path), link_target)
        if naive_leaks:
            # The setup bites: following the link the ordinary way reads the
            # host's file, so a profiler that did so would leak it.
            with open(naive_path) as f:
                self.assertIn("SECRET", f.read())
        run_dir = collect_in(pid, self.out.path, self.profcpu_cwd)
        data = all_output_bytes(run_dir)
        for secret in (b"HOST_SECRET", b"PROFCPU_CWD_SECRET"):
            self.assertFalse(secret in data, f"{secret} read through {link_target}")
        # The JIT code was sampled, and stayed unnamed.
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertGreater(sum(folded.values()), 20)

    def test_absolute_symlink_to_a_host_file(self):
        self.check_no_leak(os.path.join(self.host_dir, "secret.map"), naive_leaks=True)

    def test_relative_symlink_climbing_out(self):
        self.check_no_leak("../../../../../.." + os.path.join(self.host_dir, "secret.map"),
                           naive_leaks=False)

    def test_symlink_through_proc_self_cwd(self):
        self.check_no_leak("/proc/self/cwd/secret.map", naive_leaks=False)

    def test_symlink_through_proc_self_root(self):
        self.check_no_leak("/proc/self/root" + os.path.join(self.host_dir, "secret.map"),
                           naive_leaks=True)

    def test_symlink_to_proc_self_environ(self):
        # /proc/self is not a magic link: inside the target's root it still
        # names the reader, so this would read profcpu's own environment.
        os.environ["PROFCPU_TEST_SECRET"] = "\n7e0000000000 40 HOST_SECRET_ENV\n"
        self.addCleanup(os.environ.pop, "PROFCPU_TEST_SECRET", None)
        self.check_no_leak("/proc/self/environ", naive_leaks=False)


class HugePerfMapTest(unittest.TestCase):
    def test_two_gigabyte_perf_map(self):
        """A 2 GB perf map (real lines, then a sparse tail): profcpu reads it
        with bounded memory and time, names what it read, and says it stopped."""
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        names = write_names(tmp.path, [f"jit_function_{i}" for i in range(4)])
        proc, pid = start_fake_jit([t.fixture("fake_jit"), "--perf-map", names,
                                    "--perf-map-bytes", str(2 << 30)])
        self.addCleanup(stop, proc)
        self.addCleanup(remove_jit_files, pid)
        self.assertEqual(os.path.getsize(f"/tmp/perf-{pid}.map"), 2 << 30)
        out = os.path.join(tmp.path, "out")
        os.mkdir(out)
        code, stdout, stderr, rss, seconds = peak_rss_mib(
            [t.PROFCPU, "collect", "-pid", str(pid), "-duration", "2", "-out", out])
        self.assertEqual(code, 0, stderr)
        print(f"\n2 GB perf map: profcpu peak RSS {rss:.0f} MiB, {seconds:.1f} s in all",
              flush=True)
        self.assertLess(rss, 512, "memory is not bounded by the perf map's size")
        run_dir = stdout.strip().splitlines()[-1]
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertGreater(t.samples_with(folded, lambda f: f.startswith("jit_function_")), 20,
                           folded)
        warnings = " ".join(t.read_metadata(run_dir)["warnings"])
        self.assertRegex(warnings, r"perf-\d+\.map.*(larger|limit|first)")
        # Whatever was copied into the run folder is bounded too.
        total = sum(os.path.getsize(os.path.join(d, f))
                    for d, _, files in os.walk(run_dir) for f in files)
        self.assertLess(total, 1200 << 20)


class HostileJitdumpTest(unittest.TestCase):
    def test_jitdump_sizes_overflow(self):
        """Two good CODE_LOADs, then a code_size of 2^64-1, a record claiming
        4 GiB and a DEBUG_INFO with 2^63 entries: the good regions are named,
        the rest is reported, memory and time stay bounded."""
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        names = write_names(tmp.path, ["good_jit_one", "good_jit_two"])
        proc, pid = start_fake_jit([t.fixture("fake_jit"), "--jitdump", names,
                                    "--jitdump-overflow"])
        self.addCleanup(stop, proc)
        self.addCleanup(remove_jit_files, pid)
        out = os.path.join(tmp.path, "out")
        os.mkdir(out)
        code, stdout, stderr, rss, seconds = peak_rss_mib(
            [t.PROFCPU, "collect", "-pid", str(pid), "-duration", "2", "-out", out])
        self.assertEqual(code, 0, stderr)
        print(f"\noverflowing jitdump: profcpu peak RSS {rss:.0f} MiB, {seconds:.1f} s",
              flush=True)
        self.assertLess(rss, 512)
        run_dir = stdout.strip().splitlines()[-1]
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertGreater(t.samples_with(folded, lambda f: f.startswith("good_jit_")), 20, folded)
        for stack in folded:
            for frame in stack:
                self.assertNotIn("overflowing_size", frame)
                self.assertNotIn("huge_total_size", frame)
        warnings = " ".join(t.read_metadata(run_dir)["warnings"])
        self.assertIn(f"jit-{pid}.dump", warnings)


class HostileNamesTest(unittest.TestCase):
    """Function names (perf map and jitdump) and the thread name hold markup,
    quotes, newlines, control characters and invalid UTF-8. Every output must
    stay what it claims to be."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        map_names = write_names(cls.tmp.path, HOSTILE_MAP_NAMES)
        dump_path = os.path.join(cls.tmp.path, "dump-names")
        with open(dump_path, "wb") as f:
            f.write(encode_names(HOSTILE_DUMP_NAMES))
        cls.proc, cls.pid = start_fake_jit([
            t.fixture("fake_jit"), "--perf-map", map_names, "--jitdump", dump_path,
            "--comm", "<b>x\"&\udcc3", "--note", "</cmd>\"\\\x01 \udcff"])
        try:
            out = os.path.join(cls.tmp.path, "out")
            os.mkdir(out)
            cls.run_dir = t.collect(cls.pid, out, duration=4, freq=299)
        finally:
            stop(cls.proc)
            remove_jit_files(cls.pid)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.run_dir, name)

    def test_names_reached_the_outputs(self):
        # Otherwise the checks below would prove nothing.
        with open(self.path("folded_stacks.out"), "rb") as f:
            folded = f.read()
        # (Folding cuts names at their first '(' and drops quotes, as
        # stackcollapse-perf.pl does.)
        self.assertIn(b"<script>alert", folded)
        self.assertIn(b"onload=alert", folded)

    def test_svg_is_valid_xml_with_no_injected_element(self):
        result = subprocess.run(["xmllint", "--noout", self.path("flamegraph.svg")],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        root = ET.parse(self.path("flamegraph.svg")).getroot()
        tags = collections.Counter(e.tag.split("}")[-1] for e in root.iter())
        self.assertEqual(tags["script"], 1, tags)
        self.assertLessEqual(set(tags), {"svg", "defs", "linearGradient", "stop", "style",
                                         "script", "rect", "text", "g", "title"}, tags)
        for element in root.iter():
            for attribute in element.attrib:
                self.assertFalse(attribute.split("}")[-1].lower().startswith("on"),
                                 f"event handler attribute {attribute} on {element.tag}")
        titles = " ".join(e.text or "" for e in root.iter() if e.tag.endswith("title"))
        self.assertIn("<script>alert", titles)

    def test_perf_script_parses_with_flamescope(self):
        samples = t.parse_like_flamescope(self.path("perf_script.out"))
        self.assertGreater(len(samples), 50)
        names = {name for _, _, frames in samples for name, _ in frames}
        self.assertTrue(any("alert" in n for n in names), names)
        meta = t.read_metadata(self.run_dir)
        self.assertEqual(len(samples), meta["samples"]["total"])

    def test_folded_lines_are_intact(self):
        total = 0
        with open(self.path("folded_stacks.out"), "rb") as f:
            for line in f:
                self.assertTrue(line.endswith(b"\n"))
                m = re.match(rb"^(.+) (\d+)\n$", line)
                self.assertIsNotNone(m, line)
                self.assertNotIn(b"\r", line)
                total += int(m.group(2))
        self.assertEqual(total, t.read_metadata(self.run_dir)["samples"]["total"])

    def test_metadata_is_valid_json(self):
        with open(self.path("metadata.json"), "rb") as f:
            raw = f.read()
        raw.decode("utf-8")  # strictly valid UTF-8
        meta = json.loads(raw)
        self.assertTrue(any("</cmd>" in p["command_line"] for p in meta["processes"]), meta)


if __name__ == "__main__":
    unittest.main()


class PerfMapChangedWhileTailedTest(unittest.TestCase):
    """profcpu copies perf maps while the target runs
    (collector/perf_map_tailer.h). The target changes its map under it:
    replaces it by a FIFO or by a symlink leading out of its root, truncates
    it, grows it past the cap. No hang, no crash, no byte from outside the
    root, a bounded copy, and a warning that says what happened."""

    def setUp(self):
        self.tmp = t.TempDir()
        self.addCleanup(self.tmp.cleanup)
        # Names files outside /tmp: a target may hide /tmp behind a tmpfs.
        self.names_dir = tempfile.mkdtemp(prefix="profcpu-names-", dir="/var/tmp")
        self.addCleanup(shutil.rmtree, self.names_dir, True)

    def collect_while_changing(self, argv, change, env=None):
        """Starts fake_jit with `argv`, collects it for 3 s and calls
        change(pid) 1.2 s in; returns (run folder, pid, stderr)."""
        proc, pid = start_fake_jit(argv)
        self.addCleanup(stop, proc)
        self.addCleanup(remove_jit_files, pid)
        out = os.path.join(self.tmp.path, "out")
        os.makedirs(out, exist_ok=True)
        collector = subprocess.Popen(
            [t.PROFCPU, "collect", "-pid", str(pid), "-duration", "3", "-freq", "199",
             "-out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            errors="replace", env=env)
        time.sleep(1.2)
        change(pid)
        stdout, stderr = collector.communicate(timeout=300)
        self.assertEqual(collector.returncode, 0, stderr)
        return stdout.strip().splitlines()[-1], pid, stderr

    def names(self, *names):
        return write_names(tempfile.mkdtemp(dir=self.names_dir), list(names))

    def folded_names(self, run_dir):
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        return {frame for stack in folded for frame in stack}

    def test_map_replaced_by_a_fifo(self):
        def to_fifo(pid):
            path = f"/tmp/perf-{pid}.map"
            os.unlink(path)
            os.mkfifo(path)
        run_dir, pid, _ = self.collect_while_changing(
            [t.fixture("fake_jit"), "--perf-map", self.names("named_before_the_fifo")], to_fifo)
        self.assertIn("named_before_the_fifo", self.folded_names(run_dir))
        warnings = " ".join(t.read_metadata(run_dir)["warnings"])
        self.assertIn(f"/tmp/perf-{pid}.map of pid {pid}: it is not a regular file", warnings)

    def test_map_replaced_by_a_symlink_out_of_the_root(self):
        host_dir = tempfile.mkdtemp(prefix="profcpu-host-", dir="/var/tmp")
        self.addCleanup(shutil.rmtree, host_dir, True)
        secret = os.path.join(host_dir, "secret.map")
        with open(secret, "w") as f:
            for i in range(8):
                f.write(f"{JIT_BASE + i * 4096:x} 40 HOST_SECRET_SYMBOL_{i}\n")
        script = ("mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs {host} && "
                  "exec {fixture} --perf-map {names}").format(
                      host=host_dir, fixture=t.fixture_outside_tmp("fake_jit"),
                      names=self.names("named_before_the_symlink"))

        def to_symlink(pid):
            # Written from outside, into the target's own /tmp.
            path = f"/proc/{pid}/root/tmp/perf-{pid}.map"
            os.unlink(path)
            os.symlink(secret, path)
            with open(path) as naive:  # a naive reader would follow it out
                self.assertIn("HOST_SECRET", naive.read())
        run_dir, pid, _ = self.collect_while_changing(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script], to_symlink)
        self.assertIn("named_before_the_symlink", self.folded_names(run_dir))
        self.assertNotIn(b"HOST_SECRET", all_output_bytes(run_dir))
        with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
            self.assertIn(f"/tmp/perf-{pid}.map of pid {pid} as jit/perf-{pid}.map; it was gone "
                          "from its path by the end", f.read())

    def test_map_truncated_and_rewritten(self):
        def truncate(pid):
            with open(f"/tmp/perf-{pid}.map", "r+") as f:
                f.truncate(0)
                f.write(f"{JIT_BASE + 4096:x} 40 named_after_the_truncation\n")
        run_dir, pid, _ = self.collect_while_changing(
            [t.fixture("fake_jit"), "--perf-map", self.names("named_before_the_truncation")],
            truncate)
        names = self.folded_names(run_dir)
        self.assertIn("named_before_the_truncation", names)
        self.assertIn("named_after_the_truncation", names)
        with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
            self.assertIn("truncated or replaced 1 time(s)", f.read())

    def test_map_grown_past_the_cap(self):
        cap = 64 << 10
        def grow(pid):
            with open(f"/tmp/perf-{pid}.map", "a") as f:
                for i in range(40000):  # about 1 MiB
                    f.write(f"7f0000{i:06x} 10 junk_{i}\n")
        env = dict(os.environ, PROFCPU_PERF_MAP_MAX_BYTES=str(cap))
        run_dir, pid, _ = self.collect_while_changing(
            [t.fixture("fake_jit"), "--perf-map", self.names("named_below_the_cap")], grow,
            env=env)
        self.assertIn("named_below_the_cap", self.folded_names(run_dir))
        self.assertEqual(os.path.getsize(os.path.join(run_dir, "jit", f"perf-{pid}.map")), cap)
        warnings = " ".join(t.read_metadata(run_dir)["warnings"])
        self.assertIn(f"/tmp/perf-{pid}.map of pid {pid}: copied its first {cap} bytes "
                      "(the limit)", warnings)
