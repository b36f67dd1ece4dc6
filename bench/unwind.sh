#!/usr/bin/env bash
# Prints what -callgraph fp+cfi (frame pointers + a leaf repaired from a small
# stack copy) costs next to plain fp, -callgraph dwarf, perf record -g and
# perf record --call-graph dwarf at 99, 999 and 4999 Hz, and fp+cfi's copy
# at its default (32 KiB) against 512 bytes (the default before issue 26): the workload's
# slowdown, the profiler's CPU while sampling, the time to write outputs
# after the target exits, and bytes per sample in the recording. Builds
# what it needs first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
BUILD_DIR=$root/build bash "$root/scripts/build.sh" >/dev/null
python3 "$root/bench/unwind.py" --profcpu "$root/build/scripts/profcpu" \
  --fixed-work "$root/build/bench/fixed_work" \
  --leaf-callers "$root/build/tests/fixtures/leaf_callers" \
  --crypto-chain "$root/build/tests/fixtures/crypto_chain" "$@"
