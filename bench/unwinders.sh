#!/usr/bin/env bash
# libdwfl against libunwind where profcpu unwinds by CFI (-callgraph dwarf
# and the fp+cfi leaf repair), on the same recordings: frames recovered,
# walks reaching the thread's start, time per sample, peak RSS
# (bench/unwinders.py; the figures are in docs/unwinders.md). Builds what it
# needs first. Extra arguments go to unwinders.py (--repeat, --seconds, ...).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh" build
BUILD_DIR=$build BUILD_TARGETS="profcpu unwinders_bench fixed_work busy_stacks leaf_callers crypto_chain" \
  bash "$root/scripts/build.sh" >/dev/null
python3 "$root/bench/unwinders.py" --profcpu "${PROFCPU:-$build/scripts/profcpu}" \
  --bench "$build/bench/unwinders_bench" \
  --leaf-callers "$build/tests/fixtures/leaf_callers" \
  --crypto-chain "$build/tests/fixtures/crypto_chain" \
  --fixed-work "$build/bench/fixed_work" --busy-stacks "$build/bench/busy_stacks" "$@"
