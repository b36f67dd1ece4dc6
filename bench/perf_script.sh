#!/usr/bin/env bash
# Writes the benchmark input for bench/fold.sh and bench/render.sh to $1: the
# `perf script` text of `perf record -g` on bench/busy_stacks (two threads of
# varied, deep call chains), at least 30 MB and 50,000 samples. Generated at
# benchmark time, never committed. Usage: perf_script.sh OUT BUSY_STACKS_BINARY
set -euo pipefail
out=$1
workload=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v perf >/dev/null || { echo "perf is required: apt-get install linux-perf" >&2; exit 1; }

# busy_stacks runs until it has used this much CPU time: 4999 Hz x 12 s is
# 60k samples, unless the kernel lowered perf_event_max_sample_rate.
seconds=12
for attempt in 1 2 3 4; do
  perf record -q -F 4999 -g -o "$work/perf.data" -- "$workload" "$seconds" 2 >/dev/null 2>&1
  perf script -i "$work/perf.data" >"$out" 2>/dev/null
  samples=$(grep -c '^[^[:space:]#]' "$out" || true)
  bytes=$(stat -c %s "$out")
  if [ "$samples" -ge 50000 ] && [ "$bytes" -ge 30000000 ]; then
    echo "input: $out, $((bytes / 1000000)) MB, $samples samples (perf record -F 4999 -g, ${seconds} s of CPU)" >&2
    exit 0
  fi
  # Fewer samples than CPU time says (a throttled sample rate): run longer.
  seconds=$((seconds * 2))
done
echo "could not record 50,000 samples (last: $samples samples, $bytes bytes)" >&2
exit 1
