#!/usr/bin/env bash
# Symbolization speed on a large binary with full DWARF: profcpu itself, as
# built RelWithDebInfo (-O2 -g). Prints
#   1. the symbolizer alone (bench/symbolize_bench.cc): cold start and
#      distinct addresses named per second, inlined frames and lines included;
#   2. end to end on the same workload recorded by perf and by profcpu
#      (profcpu rebuilding its outputs in a loop, a few hundred distinct
#      functions of a 30+ MB binary): `perf script` (with and without
#      --inline) against `profcpu postprocess` starting from no symbols,
#      each with its cold start beside it.
#   bash bench/symbolize.sh            (SKIP_BUILD=1 to reuse build/)
set -euo pipefail
source "$(dirname "$0")/build_setup.sh"
seconds() { python3 -c 'import time; print(time.monotonic())'; }

echo "== the symbolizer alone, on $(basename "$profcpu")"
"$build/bench/symbolize_bench" "$(readlink -f "$profcpu")" 200000 | tee "$work/alone.txt"
cold_ms=$(awk '/^cold start/ {print $3}' "$work/alone.txt")

echo
echo "== end to end: the same workload recorded by perf and by profcpu"
# The workload: profcpu rebuilding a small run's outputs, again and again.
"$profcpu" record -freq 499 -out "$work/seed" -- "$build/bench/busy_stacks" 1 >/dev/null 2>&1
seed=$(ls -d "$work"/seed/*/ | head -1)
cat >"$work/workload.sh" <<EOF
#!/usr/bin/env bash
end=\$((SECONDS + 6))
while [ \$SECONDS -lt \$end ]; do "$profcpu" postprocess -dir "$seed" >/dev/null 2>&1; done
EOF
chmod +x "$work/workload.sh"

perf record -q -g -F 999 -o "$work/perf.data" -- "$work/workload.sh" >/dev/null 2>&1
"$profcpu" record -freq 999 -out "$work/runs" -- "$work/workload.sh" >/dev/null 2>&1
run=$(ls -d "$work"/runs/*/ | head -1)

# perf's cold start: until its first output (one pipe buffer) is written:
# reading perf.data's header and the first samples' symbol tables (and, with
# --inline, their DWARF).
first_output() {
  local start end
  start=$(seconds)
  { perf script "$@" -i "$work/perf.data" 2>/dev/null || true; } | head -c 1 >/dev/null
  end=$(seconds)
  python3 -c "print(f'{($end - $start) * 1000:.1f}')"
}
perf_cold=$(first_output)
perf_inline_cold=$(first_output --inline)

t0=$(seconds)
perf script -i "$work/perf.data" >"$work/perf.txt" 2>/dev/null
t1=$(seconds)
timeout 600 perf script --inline -i "$work/perf.data" >"$work/perf-inline.txt" 2>/dev/null || true
t2=$(seconds)
# Distinct (address, module) frames perf named.
perf_frames=$(awk '/^\t/ {print $1, $NF}' "$work/perf.txt" | sort -u | wc -l)
perf_samples=$(grep -c '^[^	#]' "$work/perf.txt" || true)

# profcpu from no symbols: the snapshot (and, for a fair start, the
# unwound stacks of nothing) removed; every distinct location named again.
rm -f "$run/symbols.bin"
t3=$(seconds)
"$profcpu" postprocess -dir "$run" >/dev/null 2>&1
t4=$(seconds)
located=$(grep -o 'symbolized [0-9]* new locations' "$run/profcpu.log" | tail -1 | awk '{print $2}')
samples=$(python3 -c "import json,sys; print(json.load(open('$run/metadata.json'))['samples']['total'])")

python3 - "$t0" "$t1" "$t2" "$t3" "$t4" "$perf_frames" "$perf_samples" "$located" "$samples" \
    "$perf_cold" "$perf_inline_cold" "$cold_ms" <<'EOF'
import sys
t0, t1, t2, t3, t4 = map(float, sys.argv[1:6])
perf_frames, perf_samples, located, samples = map(int, sys.argv[6:10])
perf_cold, perf_inline_cold, cold = map(float, sys.argv[10:13])
print(f"{'tool':34} {'cold ms':>8} {'seconds':>8} {'samples':>8} {'distinct':>9} {'per second':>11}")
print(f"{'perf script':34} {perf_cold:8.1f} {t1 - t0:8.2f} {perf_samples:8d} {perf_frames:9d}"
      f" {perf_frames / (t1 - t0):11.0f}")
print(f"{'perf script --inline':34} {perf_inline_cold:8.1f} {t2 - t1:8.2f} {perf_samples:8d}"
      f" {perf_frames:9d} {perf_frames / (t2 - t1):11.0f}")
print(f"{'profcpu postprocess (no snapshot)':34} {cold:8.1f} {t4 - t3:8.2f} {samples:8d} {located:9d}"
      f" {located / (t4 - t3):11.0f}")
print("(cold ms: perf until its first output; profcpu's symbolizer until its first address is"
      " named, from above. profcpu's seconds include replaying the recording and writing every"
      " output; its frames carry inlined calls and source lines like perf script --inline)")
EOF
