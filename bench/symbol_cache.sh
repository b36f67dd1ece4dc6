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
