#!/usr/bin/env bash
# Sets up, builds, starts the bundled demo workload (two worker threads and a
# logger with a recognisable call tree), profiles it with `profcpu collect`
# for 10 seconds, and says where the outputs are. Installs and builds only
# what that needs (profcpu and the workload), in build-demo/ at -O1 without
# debug info, as a unity build: a first run in under a minute and a half on
# two cores. scripts/build.sh
# builds the optimized profcpu (build/), scripts/test.sh everything.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh build
BUILD_DIR=$root/build-demo BUILD_TARGETS="profcpu demo_workload" bash scripts/build.sh \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCMAKE_C_FLAGS_RELEASE=-O1

"$root/build-demo/tests/fixtures/demo_workload" 20 &
demo_pid=$!
trap 'kill $demo_pid 2>/dev/null || true' EXIT
sleep 0.5

run_dir=$("$root/build-demo/scripts/profcpu" collect -pid "$demo_pid" -duration 10 -out "$root/profilings")

echo
echo "Profiled the demo workload (pid $demo_pid). Outputs in $run_dir:"
ls -l "$run_dir"
echo
echo "Hottest stacks (folded_stacks.out; samples, thread, then the innermost frames):"
# The outer frames are thread start-up boilerplate: show where the time went.
awk '{ count = $NF; stack = substr($0, 1, length($0) - length(count) - 1)
       n = split(stack, f, ";"); leaf = f[n]
       for (i = n - 1; i >= 2 && i > n - 3; i--) leaf = f[i] ";" leaf
       print count "\t" f[1] "\t" (n > 4 ? "...;" : "") leaf }' "$run_dir/folded_stacks.out" |
  sort -nr | head -5
echo
echo "Open $run_dir/profile.html in a browser (from disk, offline): the run's heatmap,"
echo "flame graph and function table in one page. flamegraph.svg is the classic flame graph;"
echo "perf_script.out feeds FlameScope, speedscope and the FlameGraph scripts."
echo "This quick build's profcpu is $root/build-demo/scripts/profcpu. For the optimized one on"
echo "PATH (/usr/local/bin), as the README's examples assume: bash scripts/build.sh && cmake --install build"
