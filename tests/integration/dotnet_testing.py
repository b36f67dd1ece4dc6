"""Helpers for the .NET tests: build the test app (tests/dotnet/PrimeApp) and
the other projects under tests/dotnet/ at test time, start the app in the
ways users run services, and read what a profile says about it."""

import atexit
import collections
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

import profcpu_testing as t

SOURCE_ROOT = os.path.dirname(os.path.dirname(t.FIXTURE_SOURCES))
DOTNET_SOURCES = os.path.join(SOURCE_ROOT, "tests", "dotnet")
DOTNET = shutil.which("dotnet")
HOT_METHOD = "FindPrimeNumber"

_built = {}


def build_project(name):
    """Builds tests/dotnet/NAME once per test process; returns the output
    directory."""
    if name in _built:
        return _built[name]
    if DOTNET is None:
        raise AssertionError("the .NET SDK (dotnet) is required for these tests")
    # Not under /tmp: one test hides /tmp behind a private tmpfs.
    work = tempfile.mkdtemp(prefix="profcpu-dotnet-", dir="/var/tmp")
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    shutil.copytree(os.path.join(DOTNET_SOURCES, name), os.path.join(work, "src"))
    out = os.path.join(work, "out")
    result = subprocess.run([DOTNET, "build", os.path.join(work, "src"), "-c", "Release",
                             "-o", out, "-nologo", "-v", "q"],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise AssertionError(f"dotnet build of {name} failed:\n{result.stdout}\n{result.stderr}")
    _built[name] = out
    return out


def build_app():
    """The test app (tests/dotnet/PrimeApp), built once per test process."""
    return build_project("PrimeApp")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(proc, timeout=60):
    """Waits for the app's "ready" line (its endpoint answered)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"the app exited early: {proc.stderr.read()}")
        if line.strip() == "ready":
            return
    raise AssertionError("the app did not become ready")


def start_app(seconds, env_extra=None, wrapper=()):
    env = dict(os.environ)
    env.pop("DOTNET_PerfMapEnabled", None)
    env.update(env_extra or {})
    out = build_app()
    argv = list(wrapper) + [DOTNET, os.path.join(out, "PrimeApp.dll"), str(seconds),
                            str(free_port())]
    # Its own folder as working directory (ASP.NET's content root): the test's
    # folder may be under a /tmp that a private tmpfs hides from the app.
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=out)
    wait_ready(proc)
    return proc


def find_pid(predicate):
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if predicate(int(entry), cmdline):
            return int(entry)
    return None


HEADER = re.compile(r"^(.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([0-9.]+):")
FRAME = re.compile(r"^\t\s*([0-9a-f]+) (.+) \((.*?)\)$")


def read_thread_samples(run_dir):
    """perf_script.out as [(pid, tid, [(name, module), ...] leaf first)]."""
    samples, current = [], None
    with open(os.path.join(run_dir, "perf_script.out"), encoding="utf-8",
              errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line:
                if current:
                    samples.append(current)
                current = None
                continue
            header = HEADER.match(line)
            if header and current is None:
                current = (int(header.group(2)), int(header.group(3)), [])
                continue
            frame = FRAME.match(line)
            if frame and current is not None:
                current[2].append((frame.group(2), frame.group(3)))
    if current:
        samples.append(current)
    return samples


def read_samples(run_dir):
    """perf_script.out as [(pid, [(name, module), ...] leaf first)]."""
    return [(pid, frames) for pid, _, frames in read_thread_samples(run_dir)]


def is_managed_module(module):
    """Frames of managed code: JIT memory (named by the perf map or jitdump)
    and precompiled code in assembly images. Not "[unknown]": an address in
    no mapping at all is not code, it is what a frame-pointer walk reads past
    a libc function built without frame pointers (the runtime's own file
    writes, for one), and perf shows the same."""
    return ("/memfd:" in module or module.startswith("/tmp/perf-") or
            module.endswith(".dll") or module == "//anon")


class Profile:
    """What the .NET tests assert about one run, for the samples of `pid`."""

    def __init__(self, run_dir, pid):
        self.samples = [frames for p, frames in read_samples(run_dir) if p == pid]
        self.total = len(self.samples)
        self.hot = [f for f in self.samples if any(HOT_METHOD in n for n, _ in f)]
        # A named managed frame above the hot method: Main or RunWorker on the
        # worker thread, the ASP.NET middleware on request threads (the
        # endpoint's lambda is inlined into the delegate ASP.NET generates).
        self.hot_with_managed_caller = 0
        for frames in self.hot:
            at = next(i for i, (n, _) in enumerate(frames) if HOT_METHOD in n)
            if any(is_managed_module(m) and not n.startswith("[unknown]") and HOT_METHOD not in n
                   for n, m in frames[at + 1:]):
                self.hot_with_managed_caller += 1
        self.managed = collections.Counter()
        self.managed_unknown = collections.Counter()
        self.coreclr_named = collections.Counter()
        self.kernel = self.kernel_named = 0
        self.unknown_in_hot_stacks = 0
        self.unmapped = 0
        # Unknown precompiled frames right above libSystem.Native.so: the
        # P/Invoke marshalling stubs of System.Net.Sockets.dll and the like,
        # which the runtime reports in neither its perf map nor its jitdump.
        # Frame pointers hid most of them (their libSystem.Native callee
        # calls a frameless libc wrapper); -callgraph fp+cfi shows them.
        self.pinvoke_stubs = 0
        for frames in self.samples:
            hot = any(HOT_METHOD in n for n, _ in frames)
            callee_module = ""
            for name, module in frames:
                unknown = name.startswith("[unknown]")
                stub = unknown and callee_module.endswith("/libSystem.Native.so")
                callee_module = module
                if module == "[unknown]":
                    # Off the end of a frame-pointer walk; the hot path has none.
                    self.unmapped += 1
                    self.unknown_in_hot_stacks += 1 if hot else 0
                if module == "[kernel.kallsyms]":
                    self.kernel += 1
                    self.kernel_named += 0 if unknown else 1
                if module.endswith("/libcoreclr.so") and not unknown:
                    self.coreclr_named[name.split("+0x")[0]] += 1
                if is_managed_module(module):
                    self.managed[module] += 1
                    if stub:
                        self.pinvoke_stubs += 1
                        self.unknown_in_hot_stacks += 1 if hot else 0
                    elif unknown:
                        self.managed_unknown[module] += 1
                        self.unknown_in_hot_stacks += 1 if hot else 0

    def describe(self):
        return (f"{self.total} samples, {len(self.hot)} in {HOT_METHOD} "
                f"({self.hot_with_managed_caller} with a managed caller), managed frames "
                f"{sum(self.managed.values())} ({sum(self.managed_unknown.values())} unknown: "
                f"{self.managed_unknown.most_common(3)}; {self.pinvoke_stubs} P/Invoke stubs), "
                f"{self.unmapped} in no mapping, libcoreclr named "
                f"{self.coreclr_named.most_common(3)}, kernel {self.kernel_named}/{self.kernel}")
