"""profcpu as users run it next to a containerized app: the helper
scripts/profile-container end to end (a .NET app container, the sidecar with
only the documented capabilities under profcpu's seccomp profile, no
--privileged, the archive postprocessed on the host), and the least-privilege
matrix: each capability dropped in turn, under podman and under capsh on the
host, must fail or degrade with a message that names what is missing."""

import os
import shutil
import signal
import subprocess
import time
import unittest

import dotnet_testing as dn
import profcpu_testing as t
import test_dotnet

HELPER = os.path.join(dn.SOURCE_ROOT, "scripts", "profile-container")
SECCOMP = os.path.join(dn.SOURCE_ROOT, "containers", "seccomp", "profcpu.json")
# The set docs/containers.md documents and the helper and manifests use.
DOCUMENTED = ["PERFMON", "SYS_PTRACE", "SYSLOG", "DAC_OVERRIDE"]


def require(tool):
    if shutil.which(tool) is None:
        raise AssertionError(f"{tool} is required (scripts/setup.sh installs it)")


def run_log(run_dir):
    with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
        return f.read()


def build_images():
    require("podman")
    build_dir = os.path.dirname(os.path.dirname(t.PROFCPU))
    result = subprocess.run(["bash", os.path.join(dn.SOURCE_ROOT, "scripts",
                                                  "container-images.sh"), build_dir],
                            capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise AssertionError(f"building the images failed:\n{result.stderr}")
    return result.stdout.split()


class AppContainer:
    """PrimeApp in a container of the debootstrap base image, with the host's
    .NET runtime mounted read-only; `user` runs it as another uid."""

    def __init__(self, base_image, name, seconds, user=None):
        self.name = name
        app_dir = dn.build_app()
        subprocess.run(["podman", "rm", "-f", name], capture_output=True)
        user_flags = ["--user", user, "-e", "HOME=/tmp"] if user else []
        self.proc = subprocess.Popen(
            ["podman", "run", "--rm", "--name", name, "--network", "none", *user_flags,
             "-v", "/usr/share/dotnet:/usr/share/dotnet:ro", "-v", f"{app_dir}:/app:ro",
             base_image, "/usr/share/dotnet/dotnet", "/app/PrimeApp.dll", str(seconds), "5080"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        dn.wait_ready(self.proc, timeout=120)

    def stop(self):
        subprocess.run(["podman", "rm", "-f", "-t", "1", self.name], capture_output=True)
        self.proc.communicate(timeout=60)


class HelperTest(test_dotnet.DotnetCase):
    @classmethod
    def setUpClass(cls):
        cls.base_image, cls.sidecar_image = build_images()

    def test_profile_container_end_to_end(self):
        app = AppContainer(self.base_image, f"profcpu-helper-app-{os.getpid()}", 60)
        try:
            out = os.path.join(self.tmp.path, "profilings")
            result = subprocess.run(
                [HELPER, "-c", app.name, "-duration", "4", "-freq", "199",
                 "-image", self.sidecar_image, "-out", out],
                capture_output=True, text=True, timeout=300)
        finally:
            app.stop()
        self.assertEqual(result.returncode, 0, result.stderr)
        runs = [r for r in os.listdir(out)]
        self.assertEqual(len(runs), 1, runs)  # the staging folder is gone
        run_dir = os.path.join(out, runs[0])
        self.assertEqual(result.stdout.strip(), os.path.join(out, runs[0]))
        self.assert_good_profile(run_dir, 1)
        self.assert_runtime_events(run_dir, 1)
        # No sidecar container is left behind.
        left = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}}"],
                              capture_output=True, text=True).stdout
        self.assertNotIn("profcpu-sidecar-", left)
        self.assert_archive_alone_postprocesses_the_same(run_dir)

    def test_interrupt_keeps_what_was_sampled(self):
        app = AppContainer(self.base_image, f"profcpu-helper-int-{os.getpid()}", 90)
        out = os.path.join(self.tmp.path, "profilings")
        try:
            helper = subprocess.Popen(
                [HELPER, "-c", app.name, "-duration", "60", "-image", self.sidecar_image,
                 "-out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # Interrupt once profcpu has started sampling.
            deadline = time.monotonic() + 120
            seen = ""
            while "profiling pid 1" not in seen and time.monotonic() < deadline:
                line = helper.stderr.readline()
                if not line:
                    break
                seen += line
            self.assertIn("profiling pid 1", seen)
            time.sleep(2)
            helper.send_signal(signal.SIGINT)
            stdout, stderr = helper.communicate(timeout=120)
        finally:
            app.stop()
        self.assertEqual(helper.returncode, 0, seen + stderr)
        run_dir = stdout.strip()
        self.assertTrue(os.path.exists(os.path.join(run_dir, "prof.tar.gz")), stderr)
        self.assertIn("collection stopped", run_log(run_dir))
        self.assertNotIn("collection stopped (duration)", run_log(run_dir))
        left = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}}"],
                              capture_output=True, text=True).stdout
        self.assertNotIn(f"profcpu-sidecar-{helper.pid}", left)

    def test_helper_errors_name_the_problem(self):
        cases = [
            ([], "-c CONTAINER is required"),
            (["-c", "profcpu-no-such-container"], "no container 'profcpu-no-such-container'"),
            (["-c", "x", "-engine", "lxc"], "-engine must be podman or docker"),
            (["-c", "x", "-duration", "soon"], "-duration must be a number of seconds"),
            (["-c", "x", "-bogus"], "unknown flag '-bogus'"),
        ]
        for args, message in cases:
            result = subprocess.run([HELPER, *args], capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn(message, result.stderr, args)


class PodmanLeastPrivilegeTest(unittest.TestCase):
    """One app container; sidecars with one capability fewer each time."""

    @classmethod
    def setUpClass(cls):
        cls.base_image, cls.sidecar_image = build_images()
        cls.app = AppContainer(cls.base_image, f"profcpu-lp-app-{os.getpid()}", 300)

    @classmethod
    def tearDownClass(cls):
        cls.app.stop()

    def setUp(self):
        self.tmp = t.TempDir()

    def tearDown(self):
        self.tmp.cleanup()

    def sidecar(self, caps, seccomp=SECCOMP, target="1", extra=()):
        out = os.path.join(self.tmp.path, f"out-{time.monotonic_ns()}")
        os.makedirs(out)
        security = ["--cap-drop", "ALL"] + [f for c in caps for f in ("--cap-add", c)]
        if seccomp:
            security += ["--security-opt", f"seccomp={seccomp}"]
        result = subprocess.run(
            ["podman", "run", "--rm", f"--pid=container:{self.app.name}", *security,
             "-v", f"{out}:/workspace/profilings", self.sidecar_image,
             "collect", "-pid", target, "-duration", "2", "-freq", "99", *extra],
            capture_output=True, text=True, timeout=300)
        runs = os.listdir(out)
        return result, (os.path.join(out, runs[0]) if runs else None)

    def test_documented_set_suffices(self):
        result, run_dir = self.sidecar(DOCUMENTED)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(os.path.exists(os.path.join(run_dir, "prof.tar.gz")))
        self.assertIn("turned perf maps on for .NET process 1", run_log(run_dir))
        self.assertGreater(dn.Profile(run_dir, 1).kernel_named, 0)

    def test_engine_default_seccomp_is_named(self):
        result, _ = self.sidecar(DOCUMENTED, seccomp=None)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("seccomp", result.stderr)
        self.assertIn("containers/", result.stderr)

    def test_without_perfmon(self):
        result, _ = self.sidecar([c for c in DOCUMENTED if c != "PERFMON"])
        self.assertNotEqual(result.returncode, 0, result.stderr)
        self.assertIn("CAP_PERFMON", result.stderr)

    def test_without_sys_ptrace(self):
        """The app (root too) holds capabilities the sidecar lacks, so the
        kernel refuses its /proc/1/root and memory: the run degrades to
        unnamed frames, and says why."""
        result, run_dir = self.sidecar([c for c in DOCUMENTED if c != "SYS_PTRACE"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("holds capabilities profcpu lacks (an app container's), needs CAP_SYS_PTRACE",
                      result.stderr)
        self.assertIn("cannot open the root of process 1", result.stderr)
        self.assertEqual(dn.Profile(run_dir, 1).hot, [])

    def test_without_syslog(self):
        result, run_dir = self.sidecar([c for c in DOCUMENTED if c != "SYSLOG"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("CAP_SYSLOG", result.stderr)

    def test_offcpu_with_bpf_added(self):
        """The BPF modes from the sidecar: the app is pid 1 there but not to
        the kernel, and its waits must still be found and named."""
        result, run_dir = self.sidecar(DOCUMENTED + ["BPF"], extra=["-mode", "offcpu"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertGreater(t.read_metadata(run_dir)["samples"]["offcpu_events"], 0)
        samples = dn.read_samples(run_dir)
        self.assertTrue(samples)
        self.assertEqual({pid for pid, _ in samples}, {1})
        # Its threads wait in the kernel, called from named managed code.
        names = {name.split("+0x")[0] for _, stack in samples for name, _ in stack}
        self.assertIn("__schedule", names, "no kernel frames")
        self.assertTrue(any(n.startswith("System.Threading.") and "[System.Private.CoreLib]" in n
                            for n in names),
                        "no named managed frame")

    def test_offcpu_without_bpf_names_it(self):
        result, _ = self.sidecar(DOCUMENTED, extra=["-mode", "offcpu"])
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("CAP_BPF", result.stderr)


class OtherUserAppTest(unittest.TestCase):
    """The app runs as uid 1000 in its container: root in the sidecar needs
    CAP_DAC_OVERRIDE for its /proc files and its .NET diagnostics socket."""

    @classmethod
    def setUpClass(cls):
        cls.base_image, cls.sidecar_image = build_images()
        cls.app = AppContainer(cls.base_image, f"profcpu-uid-app-{os.getpid()}", 300,
                               user="1000:1000")

    @classmethod
    def tearDownClass(cls):
        cls.app.stop()

    setUp = PodmanLeastPrivilegeTest.setUp
    tearDown = PodmanLeastPrivilegeTest.tearDown
    sidecar = PodmanLeastPrivilegeTest.sidecar

    def test_documented_set_turns_perf_maps_on(self):
        result, run_dir = self.sidecar(DOCUMENTED)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("turned perf maps on for .NET process 1", run_log(run_dir))

    def test_without_dac_override_says_so(self):
        result, run_dir = self.sidecar([c for c in DOCUMENTED if c != "DAC_OVERRIDE"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("process 1 runs as another user: profcpu needs CAP_DAC_OVERRIDE",
                      result.stderr)
        self.assertNotIn("turned perf maps on", run_log(run_dir))


def stop_app(proc):
    proc.kill()
    proc.communicate(timeout=60)


def all_capabilities_but(keep):
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    names = subprocess.run(["capsh", "--decode=" + format((1 << (last + 1)) - 1, "x")],
                           capture_output=True, text=True, check=True).stdout
    every = names.strip().split("=", 1)[1].split(",")
    return ",".join(c for c in every if c not in keep)


class HostLeastPrivilegeTest(test_dotnet.DotnetCase):
    """The same sets on the host: capsh drops every other capability from
    the bounding set before profcpu runs (as root)."""

    def collect_with_only(self, keep, pid):
        require("capsh")
        command = " ".join([t.PROFCPU, "collect", "-pid", str(pid), "-duration", "3",
                            "-freq", "199", "-out", self.tmp.path])
        return subprocess.run(["capsh", f"--drop={all_capabilities_but(keep)}", "--", "-c",
                               command], capture_output=True, text=True, timeout=120)

    def start_other_users_app(self):
        # build_app's work folder is mkdtemp's 0700: let uid 65534 in.
        os.chmod(os.path.dirname(dn.build_app()), 0o755)
        return dn.start_app(60, env_extra={"HOME": "/tmp", "DOTNET_CLI_HOME": "/tmp"},
                            wrapper=("setpriv", "--reuid=65534", "--regid=65534",
                                     "--clear-groups"))

    def test_documented_set_profiles_another_users_dotnet_app(self):
        app = self.start_other_users_app()
        try:
            result = self.collect_with_only(
                {"cap_perfmon", "cap_sys_ptrace", "cap_syslog", "cap_dac_override"}, app.pid)
        finally:
            stop_app(app)
        self.assertEqual(result.returncode, 0, result.stderr)
        run_dir = result.stdout.strip()
        self.assertIn(f"turned perf maps on for .NET process {app.pid}", run_log(run_dir))
        self.assert_good_profile(run_dir, app.pid)

    def test_without_dac_override(self):
        app = self.start_other_users_app()
        try:
            result = self.collect_with_only({"cap_perfmon", "cap_sys_ptrace", "cap_syslog"},
                                            app.pid)
        finally:
            stop_app(app)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("runs as another user: profcpu needs CAP_DAC_OVERRIDE", result.stderr)

    def test_without_syslog_kernel_frames_are_unnamed_and_it_says_why(self):
        app = self.start_other_users_app()
        try:
            result = self.collect_with_only(
                {"cap_perfmon", "cap_sys_ptrace", "cap_dac_override"}, app.pid)
        finally:
            stop_app(app)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("run with CAP_SYSLOG", result.stderr)
        profile = dn.Profile(result.stdout.strip(), app.pid)
        self.assertGreater(profile.kernel, 0, profile.describe())
        self.assertEqual(profile.kernel_named, 0, profile.describe())


if __name__ == "__main__":
    unittest.main()
