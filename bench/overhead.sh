#!/usr/bin/env bash
# Prints profcpu's overhead next to perf record -g on the same CPU-bound
# workload at 99 and 999 Hz: the workload's slowdown and the profiler's own
# CPU time while sampling. Builds what it needs first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
BUILD_DIR=$root/build bash "$root/scripts/build.sh" >/dev/null
python3 "$root/bench/overhead.py" --profcpu "$root/build/scripts/profcpu" \
  --workload "$root/build/bench/fixed_work" "$@"
