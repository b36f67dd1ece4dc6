# Sourced by bench/fold.sh and bench/render.sh: builds profcpu (unless
# SKIP_BUILD), makes a scratch folder and the benchmark input, and defines
# `measure`. Sets: root, build, profcpu, work, script (the perf script text:
# $PERF_SCRIPT if given, else a fresh one from bench/perf_script.sh).
source "$(dirname "${BASH_SOURCE[0]}")/build_setup.sh"
script=${PERF_SCRIPT:-$work/perf.txt}
[ -n "${PERF_SCRIPT:-}" ] || bash "$root/bench/perf_script.sh" "$script" "$build/bench/busy_stacks"

measure() { python3 "$root/bench/throughput.py" "$@"; }
