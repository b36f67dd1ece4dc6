"""The release binary alone in a bare Debian (a debootstrap minbase image: no
libarchive, no libcurl, nothing but glibc and coreutils), as users copy it
into a pod or a distroless sidecar: `record` must finish with exit 0 and
write every output, prof.tar.gz and PerfView's zip included, and
`postprocess` must unpack that prof.tar.gz there again. The binary must ask
the dynamic loader for glibc's libraries only."""

import os
import re
import shutil
import subprocess
import tarfile
import unittest
import zipfile

import profcpu_testing as t

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE_IMAGE = "localhost/profcpu-base:bookworm"
# glibc's own libraries: the only ones a machine is sure to have.
GLIBC = {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2", "libpthread.so.0", "libdl.so.2",
         "librt.so.1"}
# A CPU-bound workload from the base image's own shell, for a few seconds.
BUSY = ["/bin/sh", "-c", 'timeout 3 sh -c "while :; do :; done"; exit 0']


def ensure_base_image():
    if shutil.which("podman") is None:
        raise AssertionError("podman is required (scripts/setup.sh installs it)")
    if subprocess.run(["podman", "image", "exists", BASE_IMAGE]).returncode == 0:
        return
    # Builds it (debootstrap, about a minute) and writes podman's containers.conf.
    build_dir = os.path.dirname(os.path.dirname(t.PROFCPU))
    result = subprocess.run(["bash", os.path.join(SOURCE_ROOT, "scripts", "container-images.sh"),
                             build_dir], capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise AssertionError(f"building {BASE_IMAGE} failed:\n{result.stderr}")


def in_bare_container(out_dir, args, timeout=180):
    """Runs profcpu ARGS in the base image with only the binary mounted, and
    OUT_DIR at /out. --privileged: perf_event_open inside a container."""
    return subprocess.run(
        ["podman", "run", "--rm", "--privileged", "--network", "none",
         "-v", f"{os.path.realpath(t.PROFCPU)}:/profcpu:ro", "-v", f"{out_dir}:/out",
         BASE_IMAGE, "/profcpu", *args],
        capture_output=True, text=True, timeout=timeout)


class BareContainerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_base_image()

    def setUp(self):
        self.tmp = t.TempDir()
        self.addCleanup(self.tmp.cleanup)

    def test_needs_only_glibc(self):
        dynamic = subprocess.run(["readelf", "-d", t.PROFCPU], capture_output=True, text=True,
                                 check=True).stdout
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
        self.assertTrue(needed, dynamic)
        self.assertLessEqual(needed, GLIBC, f"NEEDED beyond glibc: {sorted(needed - GLIBC)}")

    def test_record_and_postprocess_write_every_output(self):
        out = self.tmp.path
        result = in_bare_container(out, ["record", "-out", "/out", "-format", "perfview", "--",
                                         *BUSY])
        log = result.stdout + result.stderr
        self.assertEqual(result.returncode, 0, log)
        self.assertNotIn("libarchive", log)
        runs = [d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))]
        self.assertEqual(len(runs), 1, runs)
        run_dir = os.path.join(out, runs[0])
        with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
            self.assertNotIn("libarchive", f.read())

        # prof.tar.gz: Python's tarfile reads it, and it holds the run's files.
        archive = os.path.join(run_dir, "prof.tar.gz")
        self.assertTrue(os.path.isfile(archive), os.listdir(run_dir))
        with tarfile.open(archive) as tar:
            members = {m.name: m for m in tar.getmembers()}
            for name in ["recording.zst", "metadata.json", "profcpu.log", "flamegraph.svg",
                         "folded_stacks.out", "perf_script.out"]:
                self.assertIn(name, members)
                self.assertTrue(members[name].isreg(), name)
                self.assertEqual(members[name].size, os.path.getsize(os.path.join(run_dir, name)),
                                 name)
            self.assertEqual(tar.extractfile("metadata.json").read(),
                             t.read_bytes(os.path.join(run_dir, "metadata.json")))
        folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
        self.assertGreater(sum(folded.values()), 0)

        # PerfView's zip, written by the same binary.
        zips = [n for n in os.listdir(run_dir) if n.endswith(".trace.zip")]
        self.assertEqual(len(zips), 1, os.listdir(run_dir))
        with zipfile.ZipFile(os.path.join(run_dir, zips[0])) as z:
            self.assertIsNone(z.testzip())
            self.assertTrue(any(n.endswith("/perf.data.txt") for n in z.namelist()), z.namelist())

        # postprocess there too, from the archive alone.
        alone = os.path.join(out, "alone")
        os.mkdir(alone)
        shutil.copy(archive, alone)
        result = in_bare_container(out, ["postprocess", "-dir", "/out/alone"])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(t.read_folded(os.path.join(alone, "folded_stacks.out")), folded)


if __name__ == "__main__":
    unittest.main()
