#!/usr/bin/env bash
# Folding speed: profcpu fold on a fresh >= 30 MB, >= 50k-sample perf script
# (bench/perf_script.sh), and stackcollapse-perf.pl on the same file when
# FLAMEGRAPH_DIR names a FlameGraph checkout. Prints MiB/s (wall and CPU
# time, best of 3) and peak RSS, and whether the outputs are identical.
#   FLAMEGRAPH_DIR=/path/to/FlameGraph bash bench/fold.sh
set -euo pipefail
source "$(dirname "$0")/fold_render_common.sh"

measure --label "profcpu fold" --input "$script" --stdout "$work/profcpu.folded" -- \
  "$profcpu" fold "$script"
measure --label "profcpu fold --all" --input "$script" -- "$profcpu" fold --all "$script"
if [ -n "${FLAMEGRAPH_DIR:-}" ]; then
  measure --label "stackcollapse-perf.pl" --input "$script" --runs 1 --stdout "$work/perl.folded" \
    -- perl "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" "$script"
  if cmp -s "$work/profcpu.folded" "$work/perl.folded"; then
    echo "outputs identical ($(wc -l <"$work/perl.folded") stacks)"
  else
    echo "OUTPUTS DIFFER" >&2
    exit 1
  fi
fi
