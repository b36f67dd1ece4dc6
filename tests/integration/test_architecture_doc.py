"""docs/architecture.md's include graph is the code's: scripts/include_graph.py
draws it from every non-test source, and the figures in the document must be
what it draws today; no component includes one it must not know (the flow:
base <- recording <- collector / symbolize -> fold -> render, the command
layer calling symbolize's entry, never the Symbolizer).

After a change that moves includes: python3 scripts/include_graph.py --write
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "include_graph.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          timeout=120)


class ArchitectureDocTest(unittest.TestCase):
    def test_the_documents_include_graph_is_current(self):
        result = run("--check")
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_no_include_goes_against_the_flow(self):
        result = run("--rules")
        self.assertEqual(result.returncode, 0, "includes against the flow:\n" + result.stdout)

    def test_the_checks_can_fail(self):
        # A copy of the tree with one arrow against the flow and a stale
        # figure: both checks must say so.
        with tempfile.TemporaryDirectory() as tmp:
            for part in ("base", "recording", "collector", "symbolize", "docs"):
                shutil.copytree(os.path.join(ROOT, part), os.path.join(tmp, part),
                                ignore=shutil.ignore_patterns("testdata"))
            with open(os.path.join(tmp, "collector", "injected.h"), "w") as f:
                f.write('#include "symbolize/symbolizer.h"\n')
            rules = run("--rules", "--root", tmp)
            self.assertEqual(rules.returncode, 1)
            self.assertIn("collector/injected.h: symbolize/symbolizer.h", rules.stdout)
            self.assertEqual(run("--check", "--root", tmp).returncode, 1)


if __name__ == "__main__":
    unittest.main()
