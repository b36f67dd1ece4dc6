"""The example .NET service (containers/examples/dotnet-service) as users run
it: published with the SDK here, built into an image by its Containerfile,
run in its own podman container (its own /tmp, a port on 127.0.0.1 only),
loaded by wrk at a 1:1:1 mix of its three endpoints, and asked what it
measured itself (/stats)."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import dotnet_testing as dn

SERVICE_SOURCES = os.path.join(dn.SOURCE_ROOT, "containers", "examples", "dotnet-service")
IMAGE = "localhost/profcpu-example-service:test"
ENDPOINTS = ("json", "hash", "regex")
# wrk's request script: the endpoints in turn, so each gets a third of requests.
MIX_SCRIPT = """local paths = {"/json", "/hash", "/regex"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % 3) + 1])
end
"""


def require(tool):
    if shutil.which(tool) is None:
        raise AssertionError(f"{tool} is required (scripts/setup.sh installs it)")


def build_image(base_image):
    """Publishes the service and builds its image on the debootstrap base (no
    registry here); returns the image name."""
    require("podman")
    if dn.DOTNET is None:
        raise AssertionError("the .NET SDK (dotnet) is required for this test")
    work = tempfile.mkdtemp(prefix="profcpu-service-", dir="/var/tmp")
    try:
        shutil.copytree(SERVICE_SOURCES, os.path.join(work, "src"))
        published = os.path.join(work, "published")
        result = subprocess.run([dn.DOTNET, "publish", os.path.join(work, "src"), "-c", "Release",
                                 "-o", published, "-nologo", "-v", "q"],
                                capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            raise AssertionError(f"dotnet publish failed:\n{result.stdout}\n{result.stderr}")
        dotnet_root = os.path.dirname(os.path.realpath(dn.DOTNET))
        result = subprocess.run(
            ["podman", "build", "-q", "--network", "host", "--build-arg", f"BASE={base_image}",
             "--build-context", f"app={published}", "--build-context", f"dotnet={dotnet_root}",
             "-f", os.path.join(SERVICE_SOURCES, "Containerfile"), "-t", IMAGE, SERVICE_SOURCES],
            capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            raise AssertionError(f"building {IMAGE} failed:\n{result.stderr}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return IMAGE


class ServiceContainer:
    """The service in a container of its own, published on 127.0.0.1:port."""

    def __init__(self, image, name):
        self.name = name
        self.port = dn.free_port()
        subprocess.run(["podman", "rm", "-f", name], capture_output=True)
        result = subprocess.run(["podman", "run", "-d", "--rm", "--name", name,
                                 "-p", f"127.0.0.1:{self.port}:8080", image],
                                capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise AssertionError(f"starting the service failed: {result.stderr}")
        deadline = time.monotonic() + 60
        while True:
            try:
                self.stats()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError("the service did not answer /stats within 60 s")
                time.sleep(0.5)

    def url(self, path=""):
        return f"http://127.0.0.1:{self.port}/{path}"

    def stats(self):
        """What the service measured itself, with the monotonic time asked."""
        with urllib.request.urlopen(self.url("stats"), timeout=10) as reply:
            figures = json.load(reply)
        figures["at"] = time.monotonic()
        return figures

    def stop(self):
        subprocess.run(["podman", "rm", "-f", "-t", "1", self.name], capture_output=True)


class Load:
    """wrk at the 1:1:1 mix for a bounded time; stopped by its pid."""

    def __init__(self, service, seconds, script_dir):
        require("wrk")
        script = os.path.join(script_dir, "mix.lua")
        with open(script, "w", encoding="utf-8") as f:
            f.write(MIX_SCRIPT)
        self.proc = subprocess.Popen(["wrk", "-t1", "-c4", f"-d{seconds}s", "-s", script,
                                      service.url()],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.communicate(timeout=60)[0]


def delta(before, after):
    """The service's own figures over the window between two /stats."""
    out = {k: after[k] - before[k] for k in after}
    out["seconds"] = after["at"] - before["at"]
    return out
