"""scripts/profile-container's defaults against a stand-in engine (a script
named podman on PATH that records what it is asked): the image it picks among
the ones the docs' two build scripts make, and the duration the docs show.
No container runs; test_sidecar runs the helper against real ones."""

import os
import stat
import subprocess
import unittest

import dotnet_testing as dn
import profcpu_testing as t

HELPER = os.path.join(dn.SOURCE_ROOT, "scripts", "profile-container")
# Answers `inspect` (the app container runs), `image inspect` (only the
# images in FAKE_IMAGES exist), `create`/`rm`, and `run`, which it logs and
# answers as the sidecar does: a run directory in the staging volume.
FAKE_ENGINE = r"""#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
case "$1" in
  inspect) echo true ;;
  image) for i in $FAKE_IMAGES; do [ "$i" = "$3" ] && exit 0; done; exit 1 ;;
  create) echo fake-id ;;
  rm|kill) ;;
  run)
    for arg in "$@"; do
      case "$arg" in *:/workspace/profilings) staging=${arg%%:/workspace/profilings} ;; esac
    done
    mkdir -p "$staging/12-00-00_2026-11-27" && : > "$staging/12-00-00_2026-11-27/prof.tar.gz" ;;
esac
"""


class HelperDefaultsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = t.TempDir()
        bin_dir = os.path.join(self.tmp.path, "bin")
        os.makedirs(bin_dir)
        engine = os.path.join(bin_dir, "podman")
        with open(engine, "w", encoding="utf-8") as f:
            f.write(FAKE_ENGINE)
        os.chmod(engine, stat.S_IRWXU)
        self.log = os.path.join(self.tmp.path, "engine.log")
        self.env = {k: v for k, v in os.environ.items() if k != "PROFCPU_IMAGE"}
        self.env.update(PATH=f"{bin_dir}:{os.environ['PATH']}", FAKE_LOG=self.log)

    def tearDown(self):
        self.tmp.cleanup()

    def helper(self, images, *args):
        env = dict(self.env, FAKE_IMAGES=" ".join(images))
        result = subprocess.run([HELPER, "-c", "app", "-out", os.path.join(self.tmp.path, "out"),
                                 *args], capture_output=True, text=True, env=env, timeout=60)
        runs = []
        if os.path.exists(self.log):
            with open(self.log, encoding="utf-8") as f:
                runs = [line.split() for line in f if line.startswith("run ")]
        return result, runs

    def test_finds_the_image_container_images_sh_makes(self):
        result, runs = self.helper(["localhost/profcpu:dev"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("localhost/profcpu:dev", runs[0])

    def test_prefers_the_image_built_from_source(self):
        result, runs = self.helper(["localhost/profcpu:dev", "localhost/profcpu:latest"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("localhost/profcpu:latest", runs[0])
        self.assertNotIn("localhost/profcpu:dev", runs[0])

    def test_duration_defaults_to_the_documented_30_seconds(self):
        _, runs = self.helper(["localhost/profcpu:dev"])
        args = runs[0]
        self.assertEqual(args[args.index("-duration") + 1], "30")
        with open(os.path.join(dn.SOURCE_ROOT, "docs", "containers.md"), encoding="utf-8") as f:
            self.assertIn("[-duration 30]", f.read())

    def test_no_image_names_both_ways_to_build_one(self):
        result, runs = self.helper([])
        self.assertEqual(result.returncode, 2)
        self.assertEqual(runs, [])
        self.assertIn("scripts/build-image.sh", result.stderr)
        self.assertIn("scripts/container-images.sh", result.stderr)

    def test_an_image_named_is_used_as_is(self):
        result, runs = self.helper(["localhost/profcpu:dev", "my/profcpu:1"], "-image",
                                   "my/profcpu:1")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("my/profcpu:1", runs[0])


if __name__ == "__main__":
    unittest.main()
