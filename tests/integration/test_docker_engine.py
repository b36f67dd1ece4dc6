"""scripts/profile-container -engine docker, end to end on a real Docker
engine: a private dockerd (its own socket, data and state directories, no
network setup) that this test starts and stops, the images podman built
loaded into it, a .NET app container, and the sidecar with the documented
capabilities under profcpu's seccomp profile. Debian's Docker (20.10) predates
CAP_PERFMON: the helper must notice and fall back to CAP_SYS_ADMIN."""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

import dotnet_testing as dn
import test_dotnet
import test_sidecar


class PrivateDockerd:
    """A dockerd of our own, so the test neither needs nor disturbs one the
    machine may run."""

    def __init__(self):
        for tool in ("dockerd", "docker"):
            if shutil.which(tool) is None:
                raise AssertionError(f"{tool} is required (scripts/setup.sh installs docker.io)")
        self.root = tempfile.mkdtemp(prefix="profcpu-dockerd-", dir="/var/tmp")
        self.env = dict(os.environ, DOCKER_HOST=f"unix://{self.root}/docker.sock")
        self.log = open(os.path.join(self.root, "dockerd.log"), "w")
        self.proc = subprocess.Popen(
            ["dockerd", "--data-root", f"{self.root}/data", "--exec-root", f"{self.root}/exec",
             "--pidfile", f"{self.root}/docker.pid", "--host", self.env["DOCKER_HOST"],
             "--iptables=false", "--ip6tables=false", "--bridge=none"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while self.docker(["info"], check=False).returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                with open(os.path.join(self.root, "dockerd.log")) as f:
                    raise AssertionError(f"dockerd did not start:\n{f.read()[-3000:]}")
            time.sleep(0.5)

    def docker(self, args, check=True, **kwargs):
        return subprocess.run(["docker", *args], env=self.env, capture_output=True, text=True,
                              check=check, timeout=600, **kwargs)

    def load_from_podman(self, image):
        save = subprocess.Popen(["podman", "save", image], stdout=subprocess.PIPE)
        load = subprocess.run(["docker", "load"], env=self.env, stdin=save.stdout,
                              capture_output=True, text=True, timeout=600)
        save.stdout.close()
        save.wait(timeout=600)
        if save.returncode != 0 or load.returncode != 0:
            raise AssertionError(f"moving {image} from podman to docker failed: {load.stderr}")

    def stop(self):
        if self.proc.poll() is None:
            ids = self.docker(["ps", "-aq"], check=False).stdout.split()
            if ids:
                self.docker(["rm", "-f", *ids], check=False)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


class DockerEngineTest(test_dotnet.DotnetCase):
    @classmethod
    def setUpClass(cls):
        cls.base_image, cls.sidecar_image = test_sidecar.build_images()
        cls.dockerd = PrivateDockerd()
        try:
            for image in (cls.base_image, cls.sidecar_image):
                cls.dockerd.load_from_podman(image)
        except BaseException:
            cls.dockerd.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.dockerd.stop()

    def test_profile_container_with_docker(self):
        name = f"profcpu-docker-app-{os.getpid()}"
        app = subprocess.Popen(
            ["docker", "run", "--rm", "--name", name, "--network", "none",
             "-v", "/usr/share/dotnet:/usr/share/dotnet:ro", "-v", f"{dn.build_app()}:/app:ro",
             self.base_image, "/usr/share/dotnet/dotnet", "/app/PrimeApp.dll", "60", "5080"],
            env=self.dockerd.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = os.path.join(self.tmp.path, "profilings")
        try:
            dn.wait_ready(app, timeout=120)
            result = subprocess.run(
                [test_sidecar.HELPER, "-engine", "docker", "-c", name, "-duration", "4",
                 "-freq", "199", "-image", self.sidecar_image, "-out", out],
                env=self.dockerd.env, capture_output=True, text=True, timeout=300)
        finally:
            self.dockerd.docker(["rm", "-f", name], check=False)
            app.communicate(timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        runs = os.listdir(out)
        self.assertEqual(len(runs), 1, runs)
        run_dir = os.path.join(out, runs[0])
        self.assertEqual(result.stdout.strip(), run_dir)
        self.assert_good_profile(run_dir, 1)
        # The runtime's perf maps were turned on through its diagnostics
        # socket, reached across the container boundary.
        self.assertIn("turned perf maps on for .NET process 1", test_sidecar.run_log(run_dir))
        # Debian's Docker does not know CAP_PERFMON: the helper said what it did.
        version = self.dockerd.docker(["version", "--format", "{{.Server.Version}}"]).stdout
        if int(version.split(".")[0]) < 23:
            self.assertIn("giving the sidecar CAP_SYS_ADMIN instead", result.stderr)
        left = self.dockerd.docker(["ps", "-a", "--format", "{{.Names}}"]).stdout
        self.assertNotIn("profcpu-sidecar-", left)
        self.assert_archive_alone_postprocesses_the_same(run_dir)


if __name__ == "__main__":
    unittest.main()
