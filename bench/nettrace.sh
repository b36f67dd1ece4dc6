#!/usr/bin/env bash
# The NetTrace reader's throughput (nettrace/reader.h) on a real stream:
# MB/s, events/s and peak RSS reading a ~27 MB .nettrace that profcpu itself
# collected, every event with its stack, next to TraceEvent's
# EventPipeEventSource (the reader of PerfView and dotnet-trace;
# bench/nettrace_traceevent/) on the same file.
#
# The stream is made at bench time: tests/dotnet/AllocLockApp runs all its
# phases (allocations, lock waits, throws, each event with its managed stack)
# for --seconds under `profcpu collect -pid`, which saves the session's
# stream as dotnet/PID.nettrace (10 s is ~27 MB on the 2-core dev machine).
# NETTRACE=FILE reads that file instead.
#
# Measured 2026-11-28 on the 2-core dev machine (shared, under load), a
# 27,397,502-byte stream of 323,274 events (273,561 with a stack), best of 5:
# profcpu 0.036 s, 764 MB/s, 9.0M events/s, 3.1 MB peak RSS; TraceEvent
# 4.0.0 0.227 s, 121 MB/s, 1.4M events/s (0.85 s for its first pass, the JIT
# warming), 64 MB peak RSS. docs/nettrace-reader.md has the figures before
# and after the reader's cost per input was cut.
#
# Usage: bench/nettrace.sh [--seconds S] [--passes N]
# PROFCPU=path collects with that binary; otherwise profcpu is built into
# BUILD_DIR (default build/), with the bench's reader. OLD_READER=path adds a
# row for another build's nettrace_read_bench (an older reader) on the same
# stream.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
seconds=10
passes=5
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds S] [--passes N]" >&2; exit 2 ;;
  esac
done
targets="nettrace_read_bench"
[ -z "${PROFCPU:-}" ] && [ -z "${NETTRACE:-}" ] && targets="$targets profcpu"
BUILD_DIR=$build_dir BUILD_TARGETS="$targets" bash "$root/scripts/build.sh" >/dev/null
PROFCPU=${PROFCPU:-$build_dir/scripts/profcpu}
work=$(mktemp -d /var/tmp/profcpu-bench-nettrace-XXXXXX)
trap 'rm -rf "$work"' EXIT

cp -r "$root/bench/nettrace_traceevent" "$work/reference-src"
dotnet build "$work/reference-src" -c Release -o "$work/reference" -nologo -v q >/dev/null

stream=${NETTRACE:-}
if [ -z "$stream" ]; then
  cp -r "$root/tests/dotnet/AllocLockApp" "$work/app-src"
  dotnet build "$work/app-src" -c Release -o "$work/app" -nologo -v q >/dev/null
  stream=$(python3 - "$PROFCPU" "$work" "$seconds" <<'PYTHON'
import glob
import subprocess
import sys
import time

profcpu, work, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
app = subprocess.Popen(["dotnet", f"{work}/app/AllocLockApp.dll", "all", str(seconds), "stdin"],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
try:
    if app.stdout.readline().strip() != "ready":
        sys.exit("nettrace.sh: the app did not start")
    collect = subprocess.Popen(
        [profcpu, "collect", "-pid", str(app.pid), "-duration", str(int(seconds) + 5),
         "-freq", "49", "-format", "no-html", "-out", f"{work}/run"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pattern = f"{work}/run/*/dotnet/{app.pid}.nettrace"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not glob.glob(pattern):
        time.sleep(0.05)
    time.sleep(0.5)
    app.stdin.write("go\n")
    app.stdin.flush()
    app.stdout.readline()  # the app's truth: not needed here
    app.stdin.close()
    app.wait(timeout=60)
    if collect.wait(timeout=600) != 0:
        sys.exit(f"nettrace.sh: profcpu collect failed (exit {collect.returncode})")
    print(glob.glob(pattern)[0])
finally:
    if app.poll() is None:
        app.kill()
PYTHON
)
fi

profcpu_json=$("$build_dir/bench/nettrace_read_bench" "$stream" "$passes")
reference_json=$(dotnet "$work/reference/NettraceTraceEvent.dll" "$stream" "$passes")
old_json=null
[ -n "${OLD_READER:-}" ] && old_json=$("$OLD_READER" "$stream" "$passes")
python3 - "$stream" "$profcpu_json" "$reference_json" "$old_json" <<'PYTHON'
import json
import sys

stream, ours, ref = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
old = json.loads(sys.argv[4])
print(f"stream: {ours['bytes']:,} bytes, {ours['events']:,} events "
      f"({ours['events_with_stack']:,} with a stack, {ours['frames']:,} frames), "
      f"best of {ours['passes']} passes")
if ours["events"] != ref["events"]:
    print(f"warning: TraceEvent read {ref['events']:,} events, profcpu {ours['events']:,}")
print(f"{'reader':34} {'seconds':>8} {'MB/s':>8} {'events/s':>12} {'peak RSS MB':>12}")
rows = [("profcpu nettrace/reader.h", ours)]
if old is not None:
    rows.append(("profcpu, OLD_READER", old))
rows.append(("TraceEvent EventPipeEventSource", ref))
for name, r in rows:
    print(f"{name:34} {r['seconds']:8.3f} {r['mb_per_s']:8.1f} {r['events_per_s']:12,.0f} "
          f"{r['peak_rss_kb'] / 1024:12.1f}")
print(f"TraceEvent's first pass (its JIT warming): {ref['first_pass_seconds']:.3f} s; "
      f"profcpu is {ours['mb_per_s'] / ref['mb_per_s']:.1f}x its best pass")
PYTHON
