"""profcpu postprocess writes the same bytes as the binary from before the
speed work of issue 18 (/work/old-profcpu, profcpu 0.1.0): the speed work
may change how outputs are built, never what they say.

The inputs are three small real recordings (a native demo, deep distinct
stacks, and a .NET app with runtime events; README.md says which binary
wrote each one's goldens), committed in
tests/testdata/output_stability/ (README.md there says how they were made):
a run folder reduced to what postprocess reads. Their goldens (goldens.json
beside them) are the SHA-256 of every output the old binary wrote with
`postprocess -dir COPY -format pprof,perfview`. They are committed, not
computed at test time, because the old binary exists only on the machine
that made them; a hash per output keeps the repository small.

The goldens hold on any machine: every location the recordings hold is
named in their symbols.bin, so postprocess looks nothing up (checked: the
outputs are the same when the recording's boot id matches this machine's,
where kernel addresses could be named by /proc/kallsyms, and when it does
not, but for metadata.json's boot_id, which the recording dictates). What
could still name more frames is kept out: DEBUGINFOD_URLS is unset and the
symbol cache is an empty folder.

Regenerate the goldens only when an output is meant to change (then with
the binary that writes the new outputs, and say why in the commit):
  PROFCPU_BINARY=/path/to/profcpu python3 tests/integration/test_output_stability.py --regenerate
To see the first differing line when a hash differs, name the binary that
wrote the goldens: PROFCPU_REFERENCE_BINARY=/work/old-profcpu ctest -R output_stability
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

import profcpu_testing

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata",
                        "output_stability")
GOLDENS = os.path.join(TESTDATA, "goldens.json")
RECORDINGS = ("demo_workload", "busy_stacks", "dotnet_events")
# The run folder's name, the same in every run: the perfview export is
# named after it (run.trace.zip) and metadata.json lists that name.
RUN = "run"
# Outputs left out: profcpu.log stamps every line with the time;
# prof.tar.gz (written because the copy has none) stamps every entry with
# its mtime, and packs the files compared here one by one. The inputs
# recording.zst and unwound_stacks.bin are only read.
SKIPPED = {"profcpu.log", "prof.tar.gz", "recording.zst", "unwound_stacks.bin"}
# Each output's lines are also hashed in this many blocks: a differing
# block says where to look when the binary that wrote the goldens is not at
# hand.
BLOCKS = 64


def postprocess(binary, recording, parent):
    """Copies a recording to PARENT/run and runs postprocess there; returns
    the run folder."""
    run_dir = os.path.join(parent, RUN)
    shutil.copytree(os.path.join(TESTDATA, recording), run_dir)
    env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
    result = subprocess.run([binary, "postprocess", "-dir", run_dir, "-format", "pprof,perfview",
                             "-symbol-cache", os.path.join(parent, "no-symbol-cache")],
                            capture_output=True, text=True, timeout=300, env=env)
    if result.returncode != 0:
        raise AssertionError(f"{binary} postprocess failed with {result.returncode}:\n{result.stderr}")
    return run_dir


def outputs(run_dir):
    """name -> bytes of every compared output; a .trace.zip by its members
    (its entries carry the time they were written)."""
    found = {}
    for name in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, name)
        if name in SKIPPED or not os.path.isfile(path):
            continue
        if name.endswith(".trace.zip"):
            with zipfile.ZipFile(path) as z:
                for member in sorted(z.namelist()):
                    found[f"{name}/{member}"] = z.read(member)
        else:
            with open(path, "rb") as f:
                found[name] = f.read()
    return found


def describe(data, block_lines=None):
    lines = data.split(b"\n")
    block_lines = block_lines or -(-len(lines) // BLOCKS)
    blocks = [hashlib.sha256(b"\n".join(lines[i:i + block_lines])).hexdigest()[:12]
              for i in range(0, len(lines), block_lines)]
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "lines": len(lines),
            "block_lines": block_lines, "blocks": " ".join(blocks)}


def first_difference(new, old):
    """The first line where two outputs differ, both versions shown."""
    new_lines, old_lines = new.split(b"\n"), old.split(b"\n")
    for i, (a, b) in enumerate(zip(new_lines, old_lines)):
        if a != b:
            return f"line {i + 1}:\n  now:    {a[:300]!r}\n  golden: {b[:300]!r}"
    return f"one is a prefix of the other: {len(new_lines)} lines now, {len(old_lines)} in the golden"


def where(new, golden):
    """Without the reference binary: the first block of lines that differs,
    and its first line as written now."""
    size = golden["block_lines"]
    now = describe(new, size)
    for i, (a, b) in enumerate(zip(now["blocks"].split(), golden["blocks"].split())):
        if a != b:
            start = i * size
            lines = new.split(b"\n")[start:start + size]
            return (f"first difference in lines {start + 1}-{start + len(lines)} "
                    f"(now {now['lines']} lines, {now['bytes']} bytes; golden {golden['lines']} lines, "
                    f"{golden['bytes']} bytes); line {start + 1} now: {lines[0][:300]!r}")
    return (f"the common lines agree: now {now['lines']} lines, {now['bytes']} bytes; golden "
            f"{golden['lines']} lines, {golden['bytes']} bytes")


class OutputStabilityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(GOLDENS) as f:
            cls.goldens = json.load(f)

    def test_outputs_match_the_goldens(self):
        for recording in RECORDINGS:
            with self.subTest(recording=recording), tempfile.TemporaryDirectory() as tmp:
                now = outputs(postprocess(profcpu_testing.PROFCPU, recording, tmp))
                golden = self.goldens["recordings"][recording]
                self.assertEqual(sorted(now), sorted(golden), "the set of outputs changed")
                failures = []
                reference = None
                for name, data in now.items():
                    if hashlib.sha256(data).hexdigest() == golden[name]["sha256"]:
                        continue
                    if os.environ.get("PROFCPU_REFERENCE_BINARY"):
                        if reference is None:
                            os.mkdir(os.path.join(tmp, "reference"))
                            reference = outputs(postprocess(os.environ["PROFCPU_REFERENCE_BINARY"],
                                                            recording, os.path.join(tmp, "reference")))
                        failures.append(f"{name}: {first_difference(data, reference[name])}")
                    else:
                        failures.append(f"{name}: {where(data, golden[name])}")
                if failures:
                    hint = ("" if reference is not None else
                            "\n(PROFCPU_REFERENCE_BINARY=the binary that wrote the goldens shows the "
                            "first differing line)")
                    self.fail(f"{recording}: outputs differ from the goldens:\n" + "\n".join(failures) + hint)


def regenerate():
    goldens = {"written_by": subprocess.run([profcpu_testing.PROFCPU, "version"], capture_output=True,
                                            text=True, check=True).stdout.strip(),
               "command": "postprocess -dir COPY/run -format pprof,perfview",
               "recordings": {}}
    for recording in RECORDINGS:
        with tempfile.TemporaryDirectory() as tmp:
            found = outputs(postprocess(profcpu_testing.PROFCPU, recording, tmp))
            goldens["recordings"][recording] = {name: describe(data) for name, data in found.items()}
    with open(GOLDENS, "w") as f:
        json.dump(goldens, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {GOLDENS}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--regenerate"]:
        regenerate()
    else:
        unittest.main()
