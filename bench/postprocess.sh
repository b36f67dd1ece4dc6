#!/usr/bin/env bash
# How long users wait for outputs (issue 18): profcpu postprocess of a run
# archive against perf script | stackcollapse-perf.pl | flamegraph.pl on the
# same workloads, all at 4999 Hz:
#   a: demo_workload 6 (2 threads, 6 s)
#   b: busy_stacks 12 2 (~60k deep, all-distinct stacks)
#   c: demo_workload 20, ~200k samples on a quiet 2-core machine (the
#      workload of issue 18's "~200k samples in <= 1 s, <= 150 MB")
#   e: the worst case, busy_stacks 40 2: ~200k deep, all-distinct stacks,
#      ~800 MB of perf script text; slow (no perl run), SKIP_WORST=1 skips it
#   f: deep_tree 12 2 (a recursive interpreter: tens of thousands of
#      distinct stacks ~60 frames deep; issue 29's deep workload)
#   d: 1M samples, a machine-wide minute grown from a real recording by
#      bench/grow_recording (no perl run)
# plus collect's time from the end of sampling to exit, and profcpu fold
# against stackcollapse-perf.pl on 8 MB of perf script text. Median of 3
# each; one table and the issue's targets at the end. Takes 10-20 minutes.
# OLD_PROFCPU=/path/to/profcpu also times that binary on the same archives
# and compares every output byte for byte. ONLY=a,c (or --only a,c) runs
# just those, for a quick check. PERL_RUNS=1 (or --perl-runs 1) times the
# perl pipeline fewer times than profcpu (it is slow and does not change
# with profcpu's code). GROW_RECORDING=/path/to/grow_recording
# overrides the build folder's (d must fold its copies' stacks together).
#   FLAMEGRAPH_DIR=/path/to/FlameGraph [OLD_PROFCPU=...] [SKIP_WORST=1] [ONLY=...] \
#     bash bench/postprocess.sh [--only a,b,c,e,f,d,collect,fold] [--runs 3] [--perl-runs 3] [--large-runs 3] [--json FILE]
set -euo pipefail
if [ -z "${FLAMEGRAPH_DIR:-}" ] || [ ! -f "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" ]; then
  echo "FLAMEGRAPH_DIR must name a FlameGraph checkout (stackcollapse-perf.pl, flamegraph.pl):" >&2
  echo "  git clone https://github.com/brendangregg/FlameGraph; FLAMEGRAPH_DIR=\$PWD/FlameGraph" >&2
  exit 1
fi
command -v perf >/dev/null || { echo "perf is required: apt-get install linux-perf" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is required: apt-get install time" >&2; exit 1; }
source "$(dirname "$0")/build_setup.sh"
# The binaries are copied first: a rebuild while this runs (minutes) must
# not swap the code under the measurement.
cp "$profcpu" "$work/profcpu"
old=()
if [ -n "${OLD_PROFCPU:-}" ]; then
  cp "$OLD_PROFCPU" "$work/old-profcpu"
  old=(--old "$work/old-profcpu")
fi
grow=()
if [ -n "${GROW_RECORDING:-}" ]; then
  cp "$GROW_RECORDING" "$work/grow_recording"
  grow=(--grow-recording "$work/grow_recording")
fi
python3 "$root/bench/postprocess.py" --profcpu "$work/profcpu" "${old[@]}" "${grow[@]}" \
  --flamegraph "$FLAMEGRAPH_DIR" --build "$build" --work "$work" "$@"
