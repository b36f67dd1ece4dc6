#!/usr/bin/env bash
# The symbolize stage of a fleet agent's windows, with and without the cache
# of loaded symbols (symbolize/loaded_symbol_cache.h): per-window time of
# window 1 and of the later ones (median), on
#   1. this machine's processes (`collect -a -backend bpf`, as the agent runs),
#   2. a deep, distinct-stack workload (bench/busy_stacks.cc),
#   3. a long-running JIT process's growing perf map (synthetic: 500k methods,
#      5k more each window; each window reads its own copy, as the collector
#      makes one per run folder).
# Each window replays and names a fresh copy of the same run folder
# (bench/symbol_cache_bench.cc).
#   bash bench/symbol_cache.sh [WINDOWS]     (SKIP_BUILD=1 to reuse build/)
set -euo pipefail
source "$(dirname "$0")/build_setup.sh"
windows=${1:-10}
bench=$build/bench/symbol_cache_bench

echo "== this machine's processes: profcpu collect -a -backend bpf -freq 19 -duration 5"
"$profcpu" collect -a -backend bpf -freq 19 -duration 5 -out "$work/all" >/dev/null 2>&1
"$bench" "$(ls -d "$work"/all/*/ | head -1)" "$windows" 2>/dev/null

echo
echo "== deep, distinct stacks: profcpu record -freq 999 -- busy_stacks 4"
"$profcpu" record -freq 999 -out "$work/busy" -- "$build/bench/busy_stacks" 4 >/dev/null 2>&1
"$bench" "$(ls -d "$work"/busy/*/ | head -1)" "$windows" 2>/dev/null

if command -v dotnet >/dev/null 2>&1; then
  echo
  echo "== a .NET app with perf maps on (tests/dotnet/PrimeApp): 4 windows of collect -pid, 5 s each"
  cp -r "$root/tests/dotnet/PrimeApp" "$work/app-src"
  dotnet build "$work/app-src" -c Release -o "$work/app" -nologo -v q >/dev/null
  DOTNET_PerfMapEnabled=1 dotnet "$work/app/PrimeApp.dll" 90 5393 >/dev/null 2>&1 &
  app=$!
  sleep 8
  for i in 1 2 3 4; do
    "$profcpu" collect -pid "$app" -freq 49 -duration 5 -out "$work/dotnet$i" >/dev/null 2>&1
  done
  # While the app runs: its growing perf map is continued, not read again.
  "$bench" "$work"/dotnet1/*/ "$work"/dotnet2/*/ "$work"/dotnet3/*/ "$work"/dotnet4/*/ 4 2>/dev/null
  kill "$app" 2>/dev/null || true
  wait "$app" 2>/dev/null || true
fi
