"""Before a release (scripts/release-check.sh; not in the everyday suite, it
compiles profcpu inside the build stage for minutes): the image builds from
source with the command docs/containers.md gives, and the image it makes
profiles a command and writes prof.tar.gz. CI checks the build context on
every run instead (test_image_context)."""

import os
import subprocess
import tarfile
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAG = "localhost/profcpu:release-check"


class ImageFromSourceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        result = subprocess.run(["bash", os.path.join(ROOT, "scripts", "build-image.sh"), TAG],
                                capture_output=True, text=True, timeout=3600)
        if result.returncode != 0:
            raise AssertionError(f"the image did not build from source:\n{result.stderr[-4000:]}")
        cls.report = result.stdout.strip()
        print(f"\n{cls.report}")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["podman", "rmi", TAG], capture_output=True)

    def test_the_image_prints_its_version(self):
        result = subprocess.run(["podman", "run", "--rm", TAG, "version"],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("profcpu", result.stdout)

    def test_the_image_profiles_a_command_and_archives_the_run(self):
        with tempfile.TemporaryDirectory(dir="/var/tmp") as out:
            result = subprocess.run(
                ["podman", "run", "--rm", "--privileged", "-v", f"{out}:/workspace/profilings",
                 TAG, "record", "--", "timeout", "3", "/bin/sh", "-c",
                 "i=0; while :; do i=$((i+1)); done"],
                capture_output=True, text=True, timeout=300)
            runs = os.listdir(out)
            self.assertEqual(len(runs), 1, result.stderr)
            archive = os.path.join(out, runs[0], "prof.tar.gz")
            with tarfile.open(archive) as tar:
                names = tar.getnames()
            self.assertTrue(any(n.endswith("recording.zst") for n in names), names)
            with open(os.path.join(out, runs[0], "folded_stacks.out"), encoding="utf-8") as f:
                self.assertIn("sh", f.read())


if __name__ == "__main__":
    unittest.main()
