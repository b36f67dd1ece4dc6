#!/usr/bin/env bash
# The fleet store's figures (issue 27), each next to the tool compared with:
#   1. the agent's cost: `profcpu agent` at its defaults on this machine with
#      two busy threads (bench/busy_stacks), its CPU (% of one core) and RSS
#      every 30 s for FLEET_BENCH_MINUTES (default 10), against the targets
#      (< 1% of a core; < 100 MB and flat); then `perf record -F 19 -a -g`
#      measured the same way for FLEET_BENCH_PERF_MINUTES (default 2);
#   2. ingest: bench/fleet_fill grows the store from the agent's windows into
#      FLEET_BENCH_NODES (20) nodes x FLEET_BENCH_HOURS (24) hours, rows/s into
#      one server by profcpu's client (RowBinary + gzip), next to
#      clickhouse-client inserting as many rows as TSV;
#   3. query times (median of 3) of a 1 h and a 24 h slice by `profcpu query`
#      (.svg and .html) next to the bare SQL the slice needs, against the
#      targets (< 1 s and < 5 s).
# Two ClickHouse shards run on loopback in a scratch folder
# (scripts/clickhouse-shards.sh), stopped on exit.
#   bash bench/fleet.sh [BUILD_DIR]      (SKIP_BUILD=1 to reuse BUILD_DIR)
# A quick run: FLEET_BENCH_MINUTES=2 FLEET_BENCH_NODES=4 FLEET_BENCH_HOURS=4
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${BUILD_DIR:-$root/build}}
minutes=${FLEET_BENCH_MINUTES:-10}
perf_minutes=${FLEET_BENCH_PERF_MINUTES:-2}
nodes=${FLEET_BENCH_NODES:-20}
hours=${FLEET_BENCH_HOURS:-24}
interval=30  # seconds between two readings of /proc/PID/stat
if [ -z "${SKIP_BUILD:-}" ]; then
  bash "$root/scripts/setup.sh"
  BUILD_DIR=$build BUILD_TARGETS="profcpu busy_stacks fleet_fill" \
    bash "$root/scripts/build.sh" >/dev/null
fi
profcpu=$build/scripts/profcpu
perf=${PERF:-/usr/bin/perf}
shards=$root/scripts/clickhouse-shards.sh

work=$(mktemp -d)
started=()  # pids of what this script started, stopped on exit
cleanup() {
  local pid
  for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${started[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -f "$work/store/shards" ] && bash "$shards" stop "$work/store" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

hz=$(getconf CLK_TCK)
now() { date +%s.%N; }
# CPU ticks of PID and its waited-for children (utime stime cutime cstime,
# after the command name, which may hold spaces).
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13 + $14 + $15}'; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# Busy and total jiffies of the whole machine (every core).
machine_ticks() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }

# measure NAME PID SECONDS T0: prints a row every $interval s (minute, % of
# one core over the interval, RSS MB); sets mean_pct (whole run, from T0, the
# process's start), steady_pct (after its first minute), rss_first, rss_last,
# rss_max (MB, of the readings), rss_hwm (the kernel's high-water mark of its
# RSS, VmHWM: the peaks between readings) and machine_pct (all cores' busy
# share, everyone's work).
measure() {
  local name=$1 pid=$2 seconds=$3 t0=$4
  local m0 prev_t prev_c t c rss pct elapsed
  read -r -a m0 <<<"$(machine_ticks)"
  prev_t=$t0 prev_c=0
  rss_first="" rss_max=0 steady_c0="" steady_t0=""
  printf '  %-8s %14s %8s\n' minute "% of a core" "RSS MB"
  local i
  for ((i = 1; i * interval <= seconds; i++)); do
    sleep "$(awk -v t0="$t0" -v due=$((i * interval)) -v n="$(now)" 'BEGIN {s = t0 + due - n; print (s > 0 ? s : 0)}')"
    kill -0 "$pid" 2>/dev/null || { echo "$name (pid $pid) exited early" >&2; exit 1; }
    t=$(now) c=$(cpu_ticks "$pid") rss=$(rss_kb "$pid")
    pct=$(awk -v c="$c" -v pc="$prev_c" -v t="$t" -v pt="$prev_t" -v hz="$hz" 'BEGIN {printf "%.2f", (c - pc) / hz / (t - pt) * 100}')
    rss=$(awk -v k="$rss" 'BEGIN {printf "%.1f", k / 1024}')
    [ -n "$rss_first" ] || rss_first=$rss
    rss_max=$(awk -v a="$rss_max" -v b="$rss" 'BEGIN {print (b > a ? b : a)}')
    rss_last=$rss
    elapsed=$(awk -v t="$t" -v t0="$t0" 'BEGIN {printf "%.1f", (t - t0) / 60}')
    printf '  %-8s %14s %8s\n' "$elapsed" "$pct" "$rss"
    if [ -z "$steady_t0" ] && awk -v t="$t" -v t0="$t0" 'BEGIN {exit !(t - t0 >= 59)}'; then
      steady_t0=$t steady_c0=$c
    fi
    prev_t=$t prev_c=$c
  done
  local m1
  read -r -a m1 <<<"$(machine_ticks)"
  rss_hwm=$(awk '/^VmHWM:/ {printf "%.1f", $2 / 1024}' "/proc/$pid/status")
  mean_pct=$(awk -v c="$prev_c" -v t="$prev_t" -v t0="$t0" -v hz="$hz" 'BEGIN {printf "%.2f", c / hz / (t - t0) * 100}')
  steady_pct=n/a
  if [ -n "$steady_t0" ] && [ "$steady_t0" != "$prev_t" ]; then
    steady_pct=$(awk -v c="$prev_c" -v c0="$steady_c0" -v t="$prev_t" -v t0="$steady_t0" -v hz="$hz" 'BEGIN {printf "%.2f", (c - c0) / hz / (t - t0) * 100}')
  fi
  machine_pct=$(awk -v b0="${m0[0]}" -v a0="${m0[1]}" -v b1="${m1[0]}" -v a1="${m1[1]}" 'BEGIN {printf "%.0f", (b1 - b0) / (a1 - a0) * 100}')
}

median3() { sort -g | sed -n 2p; }
# timed CMD...: wall seconds of CMD (its output to $work/timed.log).
timed() {
  local t0 t1
  t0=$(now)
  "$@" >"$work/timed.log" 2>&1 || { echo "failed: $*" >&2; cat "$work/timed.log" >&2; exit 1; }
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}

echo "== machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"

# 1. Two shards and the tables.
bash "$shards" start "$work/store" 2 >/dev/null 2>"$work/shards.log" ||
  { cat "$work/shards.log" >&2; exit 1; }
urls=$(cat "$work/store/urls")
tcp_port() { sed -n 's:.*<tcp_port>\([0-9]*\)</tcp_port>.*:\1:p' "$work/store/shard$1/config.xml"; }
ch() { clickhouse-client --host 127.0.0.1 --port "$(tcp_port 0)" "$@"; }
"$profcpu" fleet init -store "$urls" >/dev/null

# 2. The agent's cost, then perf's, with two busy threads all along.
"$build/bench/busy_stacks" $((2 * (minutes + perf_minutes + 2) * 60)) 2 >/dev/null &
busy=$!
started+=("$busy")
sleep 2

echo
echo "== agent: profcpu agent at its defaults (-backend bpf, 19 Hz, 30 s windows), two busy threads, $minutes min"
t0=$(now)
"$profcpu" agent -store "$urls" -node bench-node -spool "$work/spool" 2>"$work/agent.log" &
agent=$!
started+=("$agent")
measure agent "$agent" $((minutes * 60)) "$t0"
agent_mean=$mean_pct agent_steady=$steady_pct agent_machine=$machine_pct
agent_rss="$rss_first / $rss_last / $rss_max"
agent_hwm=$rss_hwm
agent_rss_max=$rss_max agent_rss_growth=$(awk -v a="$rss_first" -v b="$rss_last" 'BEGIN {printf "%.1f", b - a}')
kill -TERM "$agent"
wait "$agent" || { echo "the agent exited with $?; its log:" >&2; tail "$work/agent.log" >&2; exit 1; }
started=("$busy")
last=$(tail -n 1 "$work/agent.log")
echo "  agent's last line: ${last#* profcpu agent: }"
if [[ "$last" == *" 0 windows (0 samples) lost; 0 windows wait in the spool"* ]]; then
  agent_lost="nothing lost"
else
  agent_lost="LOST OR WAITING (see its last line)"
fi
echo "  windows logged: $(grep -c ' window [0-9]*:' "$work/agent.log"); $agent_lost; its window lines:"
grep ' window [0-9]*:' "$work/agent.log" | sed 's/.* window [0-9]*: /    /' || true
# Every process of the node is profiled (and named): others' work here too.
echo "  what it sampled (top executables, samples):"
ch --query "SELECT exe, comm, sum(count) AS n FROM profcpu.samples WHERE node = 'bench-node' GROUP BY exe, comm ORDER BY n DESC LIMIT 8 FORMAT TSV" |
  awk -F'\t' '{printf "    %-24s %-18s %s\n", ($1 == "" ? "-" : $1), $2, $3}'

echo
echo "== compared with: perf record -F 19 -a -g -o /dev/null, same busy threads, $perf_minutes min"
t0=$(now)
"$perf" record -F 19 -a -g -o /dev/null >/dev/null 2>"$work/perf.log" &
perf_pid=$!
started+=("$perf_pid")
measure perf "$perf_pid" $((perf_minutes * 60)) "$t0"
perf_mean=$mean_pct perf_steady=$steady_pct perf_machine=$machine_pct
perf_rss="$rss_first / $rss_last / $rss_max"
perf_hwm=$rss_hwm
kill -INT "$perf_pid"
wait "$perf_pid" 2>/dev/null || true
kill "$busy" 2>/dev/null || true
wait "$busy" 2>/dev/null || true
started=()

# 3. Ingest: the store grown from bench-node's windows.
end=$(($(date +%s) / 60 * 60))
echo
echo "== ingest: fleet_fill, $nodes nodes x $hours h of 30 s windows grown from bench-node's, into one server at a time"
fill_t0=$(now)
"$build/bench/fleet_fill" "$urls" bench-node "$nodes" "$hours" "$end" >"$work/fill.log" 2>"$work/fill.err" ||
  { cat "$work/fill.log" "$work/fill.err" >&2; exit 1; }
sed 's/^/  /' "$work/fill.log"
fill_wall=$(awk -v a="$fill_t0" -v b="$(now)" 'BEGIN {printf "%.0f", b - a}')
echo "  (the whole fill took ${fill_wall} s of wall time)"
fill_rows=$(sed -n 's/.*: \([0-9]*\) rows in .*/\1/p' "$work/fill.log")
fill_rate=$(sed -n 's/.* \([0-9]*\) rows\/s$/\1/p' "$work/fill.log")

# A store filled over a day has merged its parts as they came; this one got
# the day in minutes, and its servers merge for a while after. Queries timed
# during those merges measure the merges (the 24 h page's bare SQL took 0.72 s
# against 0.43 s once they settled), so wait until no shard merges (at most
# 10 minutes) and say how long it took.
merges_t0=$(now)
for ((waited = 0; waited < 600; waited += 2)); do
  busy_merges=0
  for shard in 0 1; do
    n=$(clickhouse-client --host 127.0.0.1 --port "$(tcp_port "$shard")" \
      --query "SELECT count() FROM system.merges WHERE database = 'profcpu'")
    busy_merges=$((busy_merges + n))
  done
  [ "$busy_merges" -eq 0 ] && break
  sleep 2
done
echo "  background merges settled after $(awk -v a="$merges_t0" -v b="$(now)" 'BEGIN {printf "%.0f", b - a}') s" \
  "($busy_merges still running)"

# 4. Query times.
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
stored=$(ch --query "SELECT count(), sum(count) FROM profcpu.samples")
echo
echo "== queries over the store: $(echo "$stored" | awk '{printf "%d rows, %d samples", $1, $2}') on 2 shards; median of 3 (s)"
printf '  %-6s %-24s %-24s %-36s %s\n' slice "profcpu query -o .svg" "profcpu query -o .html" "compared with: bare SQL (top 2000 stacks)" target
declare -A qsvg qhtml qsql
for span in 1 24; do
  from=$((end - span * 3600))
  sql="SELECT stack_id, sum(count) FROM profcpu.samples WHERE time >= toDateTime($from) AND time < toDateTime($end) GROUP BY stack_id ORDER BY 2 DESC LIMIT 2000 FORMAT Null"
  for ext in svg html; do
    times=()
    for i in 1 2 3; do
      times+=("$(timed "$profcpu" query -store "$urls" -from "$(iso "$from")" -to "$(iso "$end")" -o "$work/q$span.$ext")")
    done
    m=$(printf '%s\n' "${times[@]}" | median3)
    if [ "$ext" = svg ]; then qsvg[$span]=$m; else qhtml[$span]=$m; fi
  done
  times=()
  for i in 1 2 3; do times+=("$(timed ch --query "$sql")"); done
  qsql[$span]=$(printf '%s\n' "${times[@]}" | median3)
  target=$([ "$span" = 1 ] && echo 1 || echo 5)
  verdict() { awk -v a="$1" -v t="$target" 'BEGIN {print (a < t ? "met" : "MISSED")}'; }
  printf '  %-6s %-24s %-24s %-36s < %s s: %s\n' "${span} h" "${qsvg[$span]}" "${qhtml[$span]}" "${qsql[$span]}" \
    "$target" "$(verdict "$(printf '%s\n%s\n' "${qsvg[$span]}" "${qhtml[$span]}" | sort -g | tail -1)")"
done

# Ingest, compared with: clickhouse-client inserting as many rows as TSV into
# shard 0's samples_local (the roll-up view fires as for profcpu's inserts),
# after the queries so its rows (3 days earlier, nodes cc-*) do not weigh on
# them. A sample of the grown rows, repeated to the same count.
repeats=$(((fill_rows + 999999) / 1000000))
sample=$((fill_rows / repeats))
ch --query "SELECT time - 259200, concat('cc-', node), container, cgroup, pod_uid, pod, namespace, comm, exe, runtime, build_id, stack_id, count, window FROM profcpu.samples WHERE node LIKE 'bench-node-%' LIMIT $sample FORMAT TSV" >"$work/rows.tsv"
cc_rows=$((sample * repeats))
cc_t0=$(now)
for ((i = 0; i < repeats; i++)); do cat "$work/rows.tsv"; done |
  ch --query "INSERT INTO profcpu.samples_local FORMAT TSV"
cc_s=$(awk -v a="$cc_t0" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}')
cc_rate=$(awk -v r="$cc_rows" -v s="$cc_s" 'BEGIN {printf "%.0f", r / s}')

verdict_le() { awk -v a="$1" -v t="$2" 'BEGIN {print (a < t ? "met" : "MISSED")}'; }
echo
echo "== summary (machine: $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
printf '  %-34s %-26s %-30s %s\n' "" "profcpu" "compared with" "target"
printf '  %-34s %-26s %-30s %s\n' "CPU, % of one core (mean)" "agent: $agent_mean" "perf record -F 19 -a -g: $perf_mean" \
  "< 1: $(verdict_le "$agent_mean" 1)"
printf '  %-34s %-26s %-30s\n' "  after the first minute" "$agent_steady" "$perf_steady"
printf '  %-34s %-26s %-30s %s\n' "RSS MB first / last / max" "$agent_rss" "$perf_rss" \
  "< 100, flat: $(verdict_le "$agent_rss_max" 100), grew ${agent_rss_growth} MB"
printf '  %-34s %-26s %-30s\n' "RSS high-water mark MB (VmHWM)" "$agent_hwm" "$perf_hwm"
printf '  %-34s %-26s %-30s\n' "machine busy while measured" "${agent_machine}% of all cores" "${perf_machine}% of all cores"
printf '  %-34s %-26s\n' "agent stopped by SIGTERM" "$agent_lost"
printf '  %-34s %-26s %-30s\n' "ingest rows/s into one server" "$fill_rate (RowBinary+gzip)" "$cc_rate (clickhouse-client TSV)"
printf '  %-34s %-26s %-30s\n' "  rows" "$fill_rows" "$cc_rows in ${cc_s} s"
for span in 1 24; do
  target=$([ "$span" = 1 ] && echo 1 || echo 5)
  worst=$(printf '%s\n%s\n' "${qsvg[$span]}" "${qhtml[$span]}" | sort -g | tail -1)
  printf '  %-34s %-26s %-30s %s\n' "query ${span} h slice, s (svg / html)" "${qsvg[$span]} / ${qhtml[$span]}" \
    "bare SQL: ${qsql[$span]}" "< $target: $(verdict_le "$worst" "$target")"
done
