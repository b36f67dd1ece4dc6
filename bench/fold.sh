#!/usr/bin/env bash
# Folding speed: profcpu fold on a fresh >= 30 MB, >= 50k-sample perf script
# (bench/perf_script.sh), and stackcollapse-perf.pl on the same file when
# FLAMEGRAPH_DIR names a FlameGraph checkout. Prints MiB/s (wall and CPU
# time, best of 3) and peak RSS, and whether the outputs are identical.
#   FLAMEGRAPH_DIR=/path/to/FlameGraph bash bench/fold.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
if [ -z "${SKIP_BUILD:-}" ]; then
  bash "$root/scripts/setup.sh"
  BUILD_DIR=$build bash "$root/scripts/build.sh" >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
input=${PERF_SCRIPT:-$work/perf.txt}
[ -n "${PERF_SCRIPT:-}" ] || bash "$root/bench/perf_script.sh" "$input" "$build/bench/busy_stacks"

measure() { python3 "$root/bench/throughput.py" --input "$input" "$@"; }
measure --label "profcpu fold" --stdout "$work/profcpu.folded" -- "$build/scripts/profcpu" fold "$input"
measure --label "profcpu fold --all" -- "$build/scripts/profcpu" fold --all "$input"
if [ -n "${FLAMEGRAPH_DIR:-}" ]; then
  measure --label "stackcollapse-perf.pl" --runs 1 --stdout "$work/perl.folded" -- \
    perl "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" "$input"
  if cmp -s "$work/profcpu.folded" "$work/perl.folded"; then
    echo "outputs identical ($(wc -l <"$work/perl.folded") stacks)"
  else
    echo "OUTPUTS DIFFER" >&2
    exit 1
  fi
fi
