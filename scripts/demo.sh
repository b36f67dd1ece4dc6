#!/usr/bin/env bash
# Sets up, builds, starts the bundled demo workload (two worker threads and a
# logger with a recognisable call tree), profiles it with `profcpu collect`
# for 10 seconds, and says where the outputs are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh
BUILD_DIR=$root/build bash scripts/build.sh

"$root/build/tests/fixtures/demo_workload" 20 &
demo_pid=$!
trap 'kill $demo_pid 2>/dev/null || true' EXIT
sleep 0.5

run_dir=$("$root/build/scripts/profcpu" collect -pid "$demo_pid" -duration 10 -out "$root/profilings")

echo
echo "Profiled the demo workload (pid $demo_pid). Outputs in $run_dir:"
ls -l "$run_dir"
echo
echo "Hottest stacks (folded_stacks.out):"
awk '{print $NF "\t" $0}' "$run_dir/folded_stacks.out" | sort -nr | head -5 | cut -f2 | cut -c1-200
echo
echo "Open $run_dir/flamegraph.svg in a browser; feed $run_dir/perf_script.out to FlameScope."
