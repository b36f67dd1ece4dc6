#!/usr/bin/env bash
# Prints the overhead of profcpu's BPF paths: -backend bpf against -backend
# perf at 99, 999 and 4999 Hz on a CPU-bound workload, and -mode offcpu on a
# workload doing 20k context switches a second. Builds what it needs first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
BUILD_DIR=$root/build bash "$root/scripts/build.sh" >/dev/null
python3 "$root/bench/bpf.py" --profcpu "$root/build/scripts/profcpu" \
  --fixed-work "$root/build/bench/fixed_work" \
  --switcher "$root/build/tests/fixtures/context_switcher" "$@"
