"""containers/Dockerfile builds from the repository filtered by
containers/Dockerfile.dockerignore (docker reads it beside the Dockerfile,
podman with --ignorefile). A folder the build needs but the ignore file
leaves out breaks the image from source only, which the other tests never
build (they use the `prebuilt` target). Here the context is filtered the way
the engines filter it and configured with the build stage's cmake command:
complete without building the whole image in every run
(scripts/build-image.sh builds it before a release).
"""

import fnmatch
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
IGNORE = os.path.join(ROOT, "containers", "Dockerfile.dockerignore")
DOCKERFILE = os.path.join(ROOT, "containers", "Dockerfile")


def rules():
    """(pattern, excluded) in file order; the last match wins, as in
    Docker's .dockerignore."""
    out = []
    with open(IGNORE) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            excluded = not line.startswith("!")
            out.append((line.lstrip("!").strip("/"), excluded))
    return out


def excluded(path, patterns):
    """Whether the context leaves out PATH (relative, '/'-separated): a
    pattern matches the path or one of its parent folders."""
    verdict = False
    parts = path.split("/")
    for pattern, excludes in patterns:
        for depth in range(1, len(parts) + 1):
            if fnmatch.fnmatchcase("/".join(parts[:depth]), pattern):
                verdict = excludes
                break
    return verdict


def tracked_files():
    result = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True,
                            check=True)
    return result.stdout.split()


class ImageContextTest(unittest.TestCase):
    def test_the_filtered_context_configures_as_the_build_stage_does(self):
        patterns = rules()
        with open(DOCKERFILE) as f:
            dockerfile = f.read()
        # The build stage's configure line, with its flags.
        configure = re.search(r"cmake -S /src -B /build ([^\n\\]*)", dockerfile)
        self.assertIsNotNone(configure, "containers/Dockerfile no longer configures with cmake -S /src")
        flags = [flag for flag in configure.group(1).split()
                 if flag.startswith("-D") and "LAUNCHER" not in flag]
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "src")
            copied = 0
            for path in tracked_files():
                if excluded(path, patterns):
                    continue
                dest = os.path.join(src, path)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.copy2(os.path.join(ROOT, path), dest)
                copied += 1
            self.assertGreater(copied, 100)
            result = subprocess.run(["cmake", "-S", src, "-B", os.path.join(tmp, "build"), *flags],
                                    capture_output=True, text=True, timeout=300)
            self.assertEqual(result.returncode, 0,
                             "the image's build context does not configure (a folder missing "
                             "from containers/Dockerfile.dockerignore?):\n" + result.stderr[-3000:])

    def test_the_filter_matches_as_the_engines_do(self):
        patterns = [("*", True), ("base", False)]
        self.assertFalse(excluded("base/file_io.cc", patterns))
        self.assertTrue(excluded("build/scripts/profcpu", patterns))
        self.assertTrue(excluded("README.md", patterns))
        self.assertFalse(excluded("recording/records.h", rules()))


if __name__ == "__main__":
    unittest.main()
