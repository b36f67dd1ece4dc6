"""Stacks through code without frame pointers keep their roots with the
default flags: crypto_chain's worker threads run a 48-frame pipeline (over
8 KiB of stack) that hashes with libcrypto's SHA-256 through a frameless shim
holding a table address in rbp, so the kernel's frame-pointer walk is
garbage from the leaf (the ASP.NET Core SHA-256 handler's case, issue 26).
Of the worker samples in libcrypto, nearly all must reach the thread's start
and hold the fixture's outermost named frame."""

import os
import re
import unittest

import profcpu_testing as t

ROOT_FRAMES = ("start_thread", "clone3", "clone", "__clone", "_start", "__libc_start_main",
               "__libc_start_call_main")
OUTERMOST_NAMED = "request_thread_root"
FRAME = re.compile(r"^\s+[0-9a-f]+ (\S+?)(?:\+0x[0-9a-f]+)? \((.*)\)$")


def worker_samples(perf_script):
    """perf_script.out's samples of threads other than the main one, each as
    a list of (function, module), leaf first."""
    samples = []
    with open(perf_script, encoding="utf-8", errors="replace") as f:
        blocks = f.read().split("\n\n")
    for block in blocks:
        lines = [line for line in block.splitlines() if line and not line.startswith("#")]
        if not lines:
            continue
        ids = re.search(r" (\d+)/(\d+) ", lines[0])
        if ids is None or ids.group(1) == ids.group(2):
            continue
        frames = [(m.group(1), m.group(2)) for m in map(FRAME.match, lines[1:]) if m]
        if frames:
            samples.append(frames)
    return samples


class CryptoChainDefaultFlagsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        cls.run_dir, cls.printed = t.record(cls.tmp.path, ["-freq", "999"],
                                            [t.fixture("crypto_chain"), "3", "2"])
        cls.samples = worker_samples(os.path.join(cls.run_dir, "perf_script.out"))
        cls.in_crypto = [s for s in cls.samples
                         if any("libcrypto" in module for _, module in s)]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_fixture_hashes_in_libcrypto(self):
        self.assertRegex(self.printed, r"digests=[1-9]")
        self.assertGreater(len(self.in_crypto), 1000, "too few worker samples in libcrypto")

    def test_nearly_every_libcrypto_sample_reaches_the_thread_root(self):
        rooted = [s for s in self.in_crypto
                  if s[-1][0] in ROOT_FRAMES and any(f == OUTERMOST_NAMED for f, _ in s)]
        share = len(rooted) / len(self.in_crypto)
        cut = [s for s in self.in_crypto if s not in rooted]
        example = " <- ".join(f for f, _ in cut[0]) if cut else ""
        self.assertGreaterEqual(
            share, 0.95,
            f"{len(rooted)} of {len(self.in_crypto)} libcrypto samples rooted; e.g. {example}")

    def test_the_pipeline_is_whole_and_not_doubled(self):
        # 48 pipeline_stage frames between the root and the shim, never more.
        depths = [sum(1 for f, _ in s if f == "pipeline_stage") for s in self.in_crypto
                  if any(f == OUTERMOST_NAMED for f, _ in s)]
        self.assertTrue(depths)
        self.assertEqual(max(depths), 48)
        self.assertGreaterEqual(sum(1 for d in depths if d == 48) / len(depths), 0.95)

    def test_postprocess_elsewhere_keeps_the_roots(self):
        self.assertEqual(t.folded_from_archive_alone(self.run_dir),
                         t.read_bytes(os.path.join(self.run_dir, "folded_stacks.out")))


if __name__ == "__main__":
    unittest.main()
