#!/usr/bin/env bash
# Prints the overhead of profcpu's BPF paths: -backend bpf against -backend
# perf at 99, 999 and 4999 Hz on a CPU-bound workload, and -mode offcpu on a
# workload doing 20k context switches a second (with and without the leaf
# copy of -callgraph fp+cfi), and -backend bpf's lost stacks and cost per
# sample on a build without frame pointers (OLD_PROFCPU=path/to/an older
# profcpu adds its rows, e.g. main's stack map). Builds what it needs first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
BUILD_DIR=$root/build bash "$root/scripts/build.sh" >/dev/null
python3 "$root/bench/bpf.py" --profcpu "$root/build/scripts/profcpu" \
  --fixed-work "$root/build/bench/fixed_work" \
  --switcher "$root/build/tests/fixtures/context_switcher" \
  --nofp "$root/build/tests/fixtures/cpu_shares_nofp" \
  ${OLD_PROFCPU:+--old-profcpu "$OLD_PROFCPU"} "$@"
