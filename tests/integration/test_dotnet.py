"""profcpu on the real .NET runtime (CoreCLR), built at test time: the app
(tests/dotnet/PrimeApp) runs a prime finder on its main thread and an
ASP.NET endpoint under load. Four ways users run it: perf maps on from the
start; turned on at run time over the diagnostics socket; in its own PID and
mount namespace with a private /tmp; and in a podman container profiled
from a sidecar sharing its PID namespace, with and without a shared /tmp.

Every case asserts what a user looks for: the hot managed method holds most
of the app's samples, with its managed callers above it; libcoreclr.so
frames named (its exported functions: the runtime ships internal names only
in libcoreclr.so.dbg, which this machine cannot download); kernel frames
named; managed frames named (at most a few precompiled frames the runtime
never reports stay [unknown], none on the hot path; the P/Invoke stubs that
-callgraph fp+cfi brings out above libSystem.Native.so are counted apart)."""

import json
import os
import shutil
import subprocess
import tarfile
import time
import unittest

import dotnet_testing as dn
import profcpu_testing as t


class DotnetCase(unittest.TestCase):
    def setUp(self):
        self.tmp = t.TempDir()

    def tearDown(self):
        self.tmp.cleanup()

    def assert_good_profile(self, run_dir, pid):
        p = dn.Profile(run_dir, pid)
        what = p.describe()
        self.assertGreater(p.total, 200, what)
        self.assertGreater(len(p.hot) / p.total, 0.5, what)
        self.assertGreater(p.hot_with_managed_caller / len(p.hot), 0.9, what)
        self.assertTrue(p.coreclr_named, what)
        self.assertGreater(p.kernel, 20, what)
        self.assertGreater(p.kernel_named / p.kernel, 0.95, what)
        managed = sum(p.managed.values())
        self.assertGreater(managed, len(p.hot), what)
        self.assertLess(sum(p.managed_unknown.values()) / managed, 0.01, what)
        self.assertEqual(p.unknown_in_hot_stacks, 0, what)
        return p

    def collect(self, pid, extra=()):
        return t.collect(pid, self.tmp.path, duration=4, freq=199, extra=extra)

    def assert_runtime_events(self, run_dir, pid):
        """The EventPipe session reached the app's runtime (its socket found
        through its root, under the pid it sees itself as): one whole stream,
        with the rundown that lists every loaded method, saved and archived
        under the pid profcpu sees."""
        events = t.read_metadata(run_dir).get("dotnet_events") or []
        mine = [e for e in events if e["pid"] == pid]
        self.assertEqual(len(mine), 1, events)
        self.assertNotIn("read_error", mine[0])
        self.assertGreater(mine[0]["events"], 1000, mine[0])
        self.assertGreater(mine[0]["window_ms"], 1000, mine[0])
        with tarfile.open(os.path.join(run_dir, "prof.tar.gz")) as archive:
            self.assertIn(f"dotnet/{pid}.nettrace", archive.getnames())

    def assert_archive_alone_postprocesses_the_same(self, run_dir):
        """The run's prof.tar.gz alone, on the host, outside any container.
        Alone: this machine's own debug files (its /usr/lib/debug, its
        debuginfod cache) would name what the container's libc left unknown."""
        elsewhere = os.path.join(self.tmp.path, "laptop")
        os.makedirs(elsewhere)
        shutil.copy(os.path.join(run_dir, "prof.tar.gz"), elsewhere)
        empty = os.path.join(self.tmp.path, "no-debug-files")
        os.makedirs(empty, exist_ok=True)
        subprocess.run([t.PROFCPU, "postprocess", "-dir", elsewhere],
                       env=t.env_without_local_debug_files(empty), check=True,
                       capture_output=True, timeout=120)
        with open(os.path.join(run_dir, "folded_stacks.out"), "rb") as a, \
                open(os.path.join(elsewhere, "folded_stacks.out"), "rb") as b:
            self.assertEqual(a.read(), b.read())


class SameNamespaceTest(DotnetCase):
    def test_perf_maps_on_from_the_start(self):
        app = dn.start_app(30, {"DOTNET_PerfMapEnabled": "1"})
        try:
            run_dir = self.collect(app.pid)
        finally:
            t.stop(app)
        self.assert_good_profile(run_dir, app.pid)

    def test_perf_maps_turned_on_at_run_time(self):
        app = dn.start_app(30)
        try:
            before = self.perf_map_state(app.pid)
            run_dir = self.collect(app.pid)
            after = self.perf_map_state(app.pid)
        finally:
            t.stop(app)
        self.assertEqual(before, "off")
        self.assertEqual(after, "off", "profcpu must turn perf maps off again")
        self.assert_good_profile(run_dir, app.pid)
        with open(os.path.join(run_dir, "profcpu.log")) as f:
            self.assertIn("turned perf maps on", f.read())

    def test_perfmap_and_events_off_leave_jit_frames_unknown(self):
        # With -perfmap off alone the runtime's method events name the frames
        # (test_dotnet_events.DotnetEventNamesTest); without them nothing can.
        app = dn.start_app(30)
        try:
            run_dir = self.collect(app.pid, extra=("-perfmap", "off", "-dotnet-events", "off"))
            self.assertEqual(self.perf_map_state(app.pid), "off")
        finally:
            t.stop(app)
        p = dn.Profile(run_dir, app.pid)
        self.assertEqual(len(p.hot), 0, "without perf maps the method cannot be named")
        self.assertGreater(sum(p.managed_unknown.values()), 100, p.describe())

    @staticmethod
    def perf_map_state(pid):
        rows = json.loads(t.run_profcpu(["ps", "-json"]).stdout)
        return next(r["perf_map"] for r in rows if r["pid"] == pid)


class RuntimeFactsTest(DotnetCase):
    """metadata.json says, per .NET process, which runtime it ran, how its
    perf maps came to be on and which source named its managed frames (and
    says it again after postprocess of prof.tar.gz alone, elsewhere)."""

    def runtime_of(self, run_dir, pid):
        runtimes = t.read_metadata(run_dir).get("dotnet_runtimes") or []
        mine = [r for r in runtimes if r["pid"] == pid]
        self.assertEqual(len(mine), 1, runtimes)
        return mine[0]

    def test_turned_on_over_ipc_named_by_jitdump_and_perf_map(self):
        app = dn.start_app(30)
        try:
            version = self.runtime_version(app.pid)
            run_dir = self.collect(app.pid, extra=("-callgraph", "fp+cfi,1024"))
        finally:
            t.stop(app)
        meta = t.read_metadata(run_dir)
        self.assertEqual(meta["collection"]["callgraph"], "fp+cfi,1024")
        runtime = self.runtime_of(run_dir, app.pid)
        self.assertRegex(version, r"^\d+\.\d+\.\d+")
        self.assertEqual(runtime["runtime_version"], version)
        self.assertEqual(runtime["perf_maps"], "enabled_by_profcpu")
        named = runtime["frames_named_by"]
        self.assertGreater(named["jitdump"] + named["perf_map"], 100, runtime)
        self.assertEqual(named["method_events"], 0, runtime)
        self.assertGreater(runtime["events"]["bytes_saved"], 10000, runtime)
        self.assertEqual(meta["symbols"]["jit_frames_by_source"][str(app.pid)], named)

        elsewhere = os.path.join(self.tmp.path, "laptop")
        os.makedirs(elsewhere)
        shutil.copy(os.path.join(run_dir, "prof.tar.gz"), elsewhere)
        t.run_profcpu(["postprocess", "-dir", elsewhere])
        again = t.read_metadata(elsewhere)
        self.assertEqual(again["dotnet_runtimes"], meta["dotnet_runtimes"])
        self.assertEqual(again["collection"]["callgraph"], "fp+cfi,1024")

    def test_on_by_environment(self):
        app = dn.start_app(30, {"DOTNET_PerfMapEnabled": "1"})
        try:
            run_dir = self.collect(app.pid)
        finally:
            t.stop(app)
        runtime = self.runtime_of(run_dir, app.pid)
        self.assertIn(runtime["perf_maps"], ("environment", "environment_jitdump_restarted"))
        self.assertEqual(runtime["perf_map_enabled_setting"], "1")
        named = runtime["frames_named_by"]
        self.assertGreater(named["jitdump"] + named["perf_map"], 100, runtime)

    def test_perfmap_off_named_by_method_events(self):
        app = dn.start_app(30)
        try:
            run_dir = self.collect(app.pid, extra=("-perfmap", "off"))
        finally:
            t.stop(app)
        runtime = self.runtime_of(run_dir, app.pid)
        self.assertEqual(runtime["perf_maps"], "not_managed")
        self.assertRegex(runtime["runtime_version"], r"^\d+\.\d+\.\d+")
        named = runtime["frames_named_by"]
        self.assertEqual(named["jitdump"] + named["perf_map"], 0, runtime)
        self.assertGreater(named["method_events"], 100, runtime)

    @staticmethod
    def runtime_version(pid):
        rows = json.loads(t.run_profcpu(["ps", "-json"]).stdout)
        return next(r.get("runtime_version", "") for r in rows if r["pid"] == pid)


class PrivateNamespaceTest(DotnetCase):
    def start_in_own_namespaces(self):
        """The app as pid 1 of its own PID namespace, writing to a /tmp only
        it sees; profcpu, outside, shares nothing with it. Returns the
        wrapper's process and the app's host pid."""
        wrapper = ["unshare", "--pid", "--mount", "--fork", "--mount-proc", "--propagation",
                   "private", "sh", "-c",
                   'mount -t tmpfs tmpfs /tmp && exec "$0" "$@"']
        app = dn.start_app(30, wrapper=wrapper)
        self.addCleanup(t.stop, app)
        pid = dn.find_pid(lambda p, cmd: "PrimeApp.dll" in cmd and
                          self.namespace_pids(p)[-1] == 1 and p != app.pid)
        self.assertIsNotNone(pid, "the app's host pid")
        return app, pid

    def test_own_pid_and_mount_namespace_with_private_tmp(self):
        marker = f"{dn.free_port()}"
        app, pid = self.start_in_own_namespaces()
        self.assertFalse(os.path.exists(f"/tmp/dotnet-diagnostic-1-"), marker)
        run_dir = self.collect(pid)
        t.stop(app)
        self.assert_good_profile(run_dir, pid)
        meta = t.read_metadata(run_dir)
        process = next(p for p in meta["processes"] if p["pid"] == pid)
        self.assertEqual(process["namespace_pids"], [pid, 1])
        self.assert_runtime_events(run_dir, pid)

    def test_own_namespaces_perfmap_off_names_managed_frames_from_events(self):
        """-perfmap off: nothing written in the app's private /tmp, its managed
        frames named from its runtime's method events."""
        app, pid = self.start_in_own_namespaces()
        run_dir = self.collect(pid, extra=("-perfmap", "off"))
        written = [n for n in os.listdir(f"/proc/{pid}/root/tmp")
                   if n.startswith(("perf-", "jit-"))]
        t.stop(app)
        self.assertEqual(written, [])
        p = dn.Profile(run_dir, pid)
        self.assertGreater(len(p.hot) / p.total, 0.5, p.describe())
        self.assertLess(sum(p.managed_unknown.values()) / sum(p.managed.values()), 0.05,
                        p.describe())
        self.assert_runtime_events(run_dir, pid)

    @staticmethod
    def namespace_pids(pid):
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NStgid:"):
                    return [int(x) for x in line.split()[1:]]
        return [pid]


class PodmanSidecarTest(DotnetCase):
    """The app in a container; profcpu in a sidecar container that shares its
    PID namespace (--pid=container:APP), writing to a volume on the host."""

    @classmethod
    def setUpClass(cls):
        if shutil.which("podman") is None:
            raise AssertionError("podman is required (scripts/setup.sh installs it)")
        script = os.path.join(dn.SOURCE_ROOT, "scripts", "container-images.sh")
        build_dir = os.path.dirname(os.path.dirname(t.PROFCPU))
        result = subprocess.run(["bash", script, build_dir], capture_output=True, text=True,
                                timeout=900)
        if result.returncode != 0:
            raise AssertionError(f"building the images failed:\n{result.stderr}")
        cls.base_image, cls.sidecar_image = result.stdout.split()

    def run_case(self, shared_tmp):
        out = os.path.join(self.tmp.path, "out")
        os.makedirs(out)
        name = f"profcpu-test-app-{os.getpid()}-{int(shared_tmp)}"
        volumes = []
        if shared_tmp:
            shared = os.path.join(self.tmp.path, "shared-tmp")
            os.makedirs(shared)
            volumes = ["-v", f"{shared}:/tmp"]
        app_dir = dn.build_app()
        subprocess.run(["podman", "rm", "-f", name], capture_output=True)
        app = subprocess.Popen(
            ["podman", "run", "--rm", "--name", name, "--network", "none",
             "-v", "/usr/share/dotnet:/usr/share/dotnet:ro", "-v", f"{app_dir}:/app:ro",
             *volumes, self.base_image, "/usr/share/dotnet/dotnet", "/app/PrimeApp.dll", "40",
             "5080"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            dn.wait_ready(app, timeout=120)
            sidecar = subprocess.run(
                ["podman", "run", "--rm", f"--pid=container:{name}", "--privileged",
                 "-v", f"{out}:/workspace/profilings", *volumes, self.sidecar_image,
                 "collect", "-pid", "1", "-duration", "4", "-freq", "199"],
                capture_output=True, text=True, timeout=300)
            self.assertEqual(sidecar.returncode, 0, sidecar.stderr)
            host_pid = int(subprocess.run(
                ["podman", "inspect", "--format", "{{.State.Pid}}", name],
                capture_output=True, text=True).stdout)
        finally:
            subprocess.run(["podman", "rm", "-f", "-t", "1", name], capture_output=True)
            app.wait(timeout=60)
        runs = os.listdir(out)
        self.assertEqual(len(runs), 1, runs)
        run_dir = os.path.join(out, runs[0])
        # Inside the shared PID namespace the app is pid 1.
        self.assert_good_profile(run_dir, 1)
        self.assertNotEqual(host_pid, 1)
        self.assert_archive_alone_postprocesses_the_same(run_dir)

    def test_sidecar_without_shared_tmp(self):
        self.run_case(shared_tmp=False)

    def test_sidecar_with_shared_tmp(self):
        self.run_case(shared_tmp=True)


if __name__ == "__main__":
    unittest.main()
