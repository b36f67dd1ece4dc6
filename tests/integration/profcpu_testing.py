"""Helpers for profcpu's integration tests: run the real binary against real
processes (fixtures built from tests/fixtures/) and read what it wrote."""

import atexit
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

PROFCPU = os.environ.get("PROFCPU_BINARY", "")
FIXTURES = os.environ.get("PROFCPU_FIXTURES", "")
FIXTURE_SOURCES = os.environ.get("PROFCPU_FIXTURE_SOURCES", "")

if not PROFCPU or not os.path.exists(PROFCPU):
    raise RuntimeError("PROFCPU_BINARY must name the built profcpu binary (run through ctest)")


def fixture(name):
    path = os.path.join(FIXTURES, name)
    if not os.path.exists(path):
        raise RuntimeError(f"fixture {path} is missing: build the project first")
    return path


def fixture_outside_tmp(name):
    """A copy of a fixture under /var/tmp, for targets that hide /tmp behind a
    private tmpfs (the build may live under /tmp). Removed at exit."""
    return _copy_outside_tmp(fixture(name))


def fixture_source_outside_tmp(name):
    """The same for a fixture's source (a script: recursive.js)."""
    return _copy_outside_tmp(fixture_source(name))


def _copy_outside_tmp(path):
    if path not in _fixture_copies:
        folder = tempfile.mkdtemp(prefix="profcpu-fixture-", dir="/var/tmp")
        atexit.register(shutil.rmtree, folder, True)
        _fixture_copies[path] = shutil.copy2(path, folder)
    return _fixture_copies[path]


_fixture_copies = {}


def fixture_source(name):
    return os.path.join(FIXTURE_SOURCES, name)


class TempDir:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="profcpu-test-")

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


def start(argv, **kwargs):
    """Starts a fixture process; the caller must stop() it."""
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)


def start_node_with_perf_map(test, cwd):
    """Starts recursive.js under node --perf-basic-prof (in `cwd`: node also
    writes an isolate-*.log there) and waits until its perf map exists and
    its hot function is compiled; the caller must stop() it."""
    node = shutil.which("node") or shutil.which("nodejs")
    test.assertIsNotNone(node, "Node.js is required (scripts/setup.sh installs it)")
    proc = start([node, "--perf-basic-prof", fixture_source("recursive.js"), "8"], cwd=cwd)
    if not wait_for(lambda: os.path.exists(f"/tmp/perf-{proc.pid}.map")):
        stop(proc)
        test.fail("node did not write its perf map")
    time.sleep(1.0)
    return proc


def stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def run_profcpu(args, timeout=120, check=True):
    result = subprocess.run([PROFCPU] + args, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(
            f"profcpu {' '.join(args)} failed with {result.returncode}:\n{result.stderr}")
    return result


def collect(pid, out_dir, duration=3, freq=99, extra=()):
    """Runs profcpu collect and returns the run folder it printed."""
    result = run_profcpu(["collect", "-pid", str(pid), "-duration", str(duration),
                          "-freq", str(freq), "-out", out_dir, *extra],
                         timeout=duration + 120)
    run_dir = result.stdout.strip().splitlines()[-1]
    if not os.path.isdir(run_dir):
        raise AssertionError(f"profcpu printed {run_dir!r}, not a folder; stderr:\n{result.stderr}")
    return run_dir


def record(out_dir, args, command, timeout=120):
    """Runs profcpu record ARGS -- COMMAND; returns the run folder and what
    the command printed (before the folder's path)."""
    result = run_profcpu(["record", "-out", out_dir, *args, "--", *command], timeout=timeout)
    lines = result.stdout.strip().splitlines()
    run_dir = lines[-1]
    if not os.path.isdir(run_dir):
        raise AssertionError(f"profcpu printed {run_dir!r}, not a folder; stderr:\n{result.stderr}")
    return run_dir, "\n".join(lines[:-1])


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def env_without_local_debug_files(empty_dir):
    """os.environ for a profcpu that finds no debug file of this machine's
    (its /usr/lib/debug, its debuginfod cache: both `empty_dir`), as a laptop
    without debug packages: what the archive alone names."""
    return {**os.environ, "PROFCPU_SYSTEM_DEBUG_DIR": empty_dir,
            "DEBUGINFOD_CACHE_PATH": empty_dir}


def folded_from_archive_alone(run_dir):
    """folded_stacks.out (bytes) of `profcpu postprocess` on a folder holding
    only the run's prof.tar.gz, as on a laptop (without debug packages)."""
    elsewhere = TempDir()
    try:
        shutil.copy(os.path.join(run_dir, "prof.tar.gz"), elsewhere.path)
        empty = os.path.join(elsewhere.path, "no-debug-files")
        os.makedirs(empty)
        result = subprocess.run([PROFCPU, "postprocess", "-dir", elsewhere.path],
                                env=env_without_local_debug_files(empty), capture_output=True,
                                text=True, timeout=120)
        if result.returncode != 0:
            raise AssertionError(f"postprocess failed with {result.returncode}:\n{result.stderr}")
        return read_bytes(os.path.join(elsewhere.path, "folded_stacks.out"))
    finally:
        elsewhere.cleanup()


def read_folded(path):
    """folded_stacks.out as {stack: count}, stack as a tuple of frames (root first)."""
    stacks = collections.Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            stacks[tuple(stack.split(";"))] += int(count)
    return stacks


def samples_with(stacks, predicate):
    return sum(count for stack, count in stacks.items() if any(predicate(f) for f in stack))


def read_metadata(run_dir):
    with open(os.path.join(run_dir, "metadata.json"), encoding="utf-8") as f:
        return json.load(f)


def read_page_meta(path):
    """profile.html's META (docs/profile-page.md): the JSON in its
    profcpu-meta script element."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    match = re.search(r'<script type="application/json" id="profcpu-meta">(.*?)</script>',
                      page, re.S)
    if not match:
        raise AssertionError(f"{path} has no profcpu-meta element")
    return json.loads(match.group(1))


# FlameScope's own parser (Netflix/flamescope app/perf/regexp.py and
# app/util/stack.py), transcribed: what it accepts is what matters.
FLAMESCOPE_EVENT = re.compile(r" +([0-9.]+): .+?:")
FLAMESCOPE_FRAME = re.compile(r"^[\t ]*[0-9a-fA-F]+ (.+) \((.*?)\)$")
FLAMESCOPE_COMM = re.compile(r"^ *([^0-9]+)")


def parse_like_flamescope(path):
    """Returns a list of (time, comm, frames) as FlameScope would read them,
    and raises if FlameScope would reject the file."""
    samples = []
    first_data_line = True
    current = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if first_data_line:
                if not FLAMESCOPE_EVENT.search(line):
                    raise AssertionError(f"first line is not an event line: {line!r}")
                first_data_line = False
            if line == "":
                if current is not None:
                    samples.append(current)
                current = None
                continue
            event = FLAMESCOPE_EVENT.search(line)
            if current is None:
                if not event:
                    raise AssertionError(f"expected an event line, got {line!r}")
                comm = FLAMESCOPE_COMM.search(line)
                current = (float(event.group(1)), comm.group(1).rstrip() if comm else "", [])
                continue
            frame = FLAMESCOPE_FRAME.match(line)
            if not frame:
                raise AssertionError(f"FlameScope cannot parse frame line {line!r}")
            current[2].append((frame.group(1), frame.group(2)))
    if current is not None:
        samples.append(current)
    return samples


def wait_for(predicate, timeout=10.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
