#!/usr/bin/env bash
# Rendering speed: profcpu flamegraph on the folded stacks of a fresh
# >= 30 MB, >= 50k-sample perf script (bench/perf_script.sh), and
# flamegraph.pl on the same file when FLAMEGRAPH_DIR names a FlameGraph
# checkout. Prints MiB/s of folded input (wall and CPU time, best of 3) and
# peak RSS; then the whole way from perf script text to SVG.
# Last, the graph's tree of a run (as `collect`/`postprocess` build it for
# flamegraph.svg) timed both ways by render_benchmark --folded: partitioned
# frame by frame (now) and stacks sorted then added (before), with the SVG
# bytes compared. DEEP_FOLDED=RUN/folded_stacks.out takes a run's stacks,
# e.g. of `profcpu collect -freq 4999 -- build/bench/busy_stacks 40 2`
# (~200k deep, distinct stacks); otherwise the --tid stacks above.
#   FLAMEGRAPH_DIR=/path/to/FlameGraph bash bench/render.sh
set -euo pipefail
source "$(dirname "$0")/fold_render_common.sh"

# Per-thread stacks (--tid), as `profcpu collect -threads` draws them: more
# distinct stacks, a bigger folded file.
"$profcpu" fold --tid "$script" >"$work/stacks.folded"
echo "folded: $(wc -l <"$work/stacks.folded") distinct stacks, $(($(stat -c %s "$work/stacks.folded") / 1000000)) MB" >&2

measure --label "profcpu flamegraph" --input "$work/stacks.folded" --stdout "$work/profcpu.svg" -- \
  "$profcpu" flamegraph "$work/stacks.folded"
if [ -n "${FLAMEGRAPH_DIR:-}" ]; then
  measure --label "flamegraph.pl" --runs 1 --input "$work/stacks.folded" --stdout "$work/perl.svg" -- \
    perl "$FLAMEGRAPH_DIR/flamegraph.pl" "$work/stacks.folded"
fi
echo "perf script text to SVG:"
measure --label "profcpu fold | flamegraph" --input "$script" -- \
  sh -c '"$1" fold --tid "$2" | "$1" flamegraph' sh "$profcpu" "$script"
if [ -n "${FLAMEGRAPH_DIR:-}" ]; then
  measure --label "stackcollapse | flamegraph.pl" --runs 1 --input "$script" -- \
    sh -c 'perl "$1/stackcollapse-perf.pl" --tid "$2" | perl "$1/flamegraph.pl"' sh \
    "$FLAMEGRAPH_DIR" "$script"
fi
echo "the graph's tree of a run's stacks, best of 5:"
"$build/render/render_benchmark" --folded "${DEEP_FOLDED:-$work/stacks.folded}"
