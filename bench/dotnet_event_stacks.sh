#!/usr/bin/env bash
# What the .NET event stacks (allocations, lock waits, exceptions by managed
# stack; issue 28) cost: iterations per second of the known-answer app
# (tests/dotnet/AllocLockApp, built here; its alloc phase by default: one
# thread allocating as fast as it can, ~100 KB per GCAllocationTick, each
# with its stack) with no profcpu, under `profcpu collect -dotnet-events off`
# and under `profcpu collect` (events on: every event with its stack), as
# iterations per second and as the app's CPU time per iteration; and
# the nettrace stream's bytes per minute during the run, next to the budget
# that keeps a 30-minute collection within the stream's cap
# (collector/dotnet/event_budget.h). Runs go round by round (each
# configuration once a round) so a change in the machine's load hits them
# alike; medians with the spread are printed.
#
# Measured 2026-11-28 on the 2-core dev machine, quiet, 3 rounds of 8 s, the
# alloc phase allocating ~4 GiB/s (~45,000 GCAllocationTicks a second):
# events without stacks (request_stackwalk off) -9.4% iterations/s, +6.4% app
# CPU per iteration; with stacks -10.0% / +12.7%; the stream 212 MiB/min
# either way (stacks are deduplicated: a few in its stack blocks), about 0.86
# MiB per GiB allocated, so a 30-minute collection's budget keeps every tick
# of an app allocating up to ~8.7 GiB/min and thins the rest.
#
# Usage: bench/dotnet_event_stacks.sh [--seconds S] [--rounds N] [--phases P]
# PROFCPU=path uses that binary; otherwise profcpu is built into BUILD_DIR
# (default build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
if [ -z "${PROFCPU:-}" ]; then
  BUILD_DIR=$build_dir BUILD_TARGETS="profcpu" bash "$root/scripts/build.sh" >/dev/null
  PROFCPU=$build_dir/scripts/profcpu
fi
work=$(mktemp -d /var/tmp/profcpu-bench-event-stacks-XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$root/tests/dotnet/AllocLockApp" "$work/src"
dotnet build "$work/src" -c Release -o "$work/app" -nologo -v q >/dev/null

python3 - "$PROFCPU" "$work" "$@" <<'PYTHON'
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

parser = argparse.ArgumentParser(prog="dotnet_event_stacks.sh")
parser.add_argument("profcpu")
parser.add_argument("work")
parser.add_argument("--seconds", type=float, default=10)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--phases", default="alloc")
args = parser.parse_args()
APP = os.path.join(args.work, "app", "AllocLockApp.dll")
# collector/collection_options.h: the stream's cap per process, and
# event_budget.h: 7/8 of it over a 30-minute collection, 60 s of it banked.
CAP = 256 << 20
BUDGET_PER_MINUTE = CAP * 7 / 8 / 30
BURST_BYTES = BUDGET_PER_MINUTE / 60 * 60

CONFIGS = [("none", "no profcpu"), ("off", "collect -dotnet-events off"),
           ("on", "collect -dotnet-events on")]


def cpu_seconds(pid):
    """CPU time of the app so far (/proc/PID/stat's utime and stime: every
    thread's, those that have exited too): its own, the GC's and EventPipe's
    in it. Less at the mercy of a busy machine than iterations per second."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def size(pattern):
    return sum(os.path.getsize(p) for p in glob.glob(pattern))


def run_once(config):
    app = subprocess.Popen(["dotnet", APP, args.phases, str(args.seconds), "stdin"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    collect = None
    out = os.path.join(args.work, "run")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    nettrace = os.path.join(out, "*", "dotnet", f"{app.pid}.nettrace")
    try:
        line = app.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"the app said {line!r}")
        if config != "none":
            extra = ["-dotnet-events", "off"] if config == "off" else []
            collect = subprocess.Popen(
                [args.profcpu, "collect", "-pid", str(app.pid), "-duration",
                 str(int(args.seconds) + 10), "-freq", "49", "-out", out] + extra,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # The same wait in every configuration: until the stream flows (at
        # most 3 s; perf is attached well before), then half a second.
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and not (config == "on" and size(nettrace) > 0):
            time.sleep(0.05)
        time.sleep(0.5)
        before = size(nettrace)
        cpu = cpu_seconds(app.pid)
        app.stdin.write("go\n")
        app.stdin.flush()
        truth = json.loads(app.stdout.readline())
        cpu = cpu_seconds(app.pid) - cpu
        during = size(nettrace) - before
        if collect is not None and collect.poll() is not None:
            raise RuntimeError("the collection ended before the app's run")
        app.stdin.close()
        app.wait(timeout=30)
        if collect is not None and collect.wait(timeout=600) != 0:
            raise RuntimeError(f"profcpu collect failed (exit {collect.returncode})")
        rate = (truth["alloc"]["iterations_per_second"] if "alloc" in truth
                else truth["process_bytes"] / truth["seconds"])
        work = truth["alloc"]["iterations"] if "alloc" in truth else truth["process_bytes"]
        return {"rate": rate, "cpu_per_unit": cpu / work * 1e9, "per_minute": during / truth["seconds"] * 60,
                "file": size(nettrace), "allocated_per_minute":
                truth["process_bytes"] / truth["seconds"] * 60}
    finally:
        if collect is not None and collect.poll() is None:
            collect.kill()
            collect.wait()
        if app.poll() is None:
            app.kill()
            app.wait()


runs = {config: [] for config, _ in CONFIGS}
for round_ in range(args.rounds):
    for config, _ in CONFIGS:
        runs[config].append(run_once(config))
        print(f"round {round_ + 1}/{args.rounds} {config}: "
              f"{runs[config][-1]['rate']:.0f}/s", file=sys.stderr)

mib = 1 << 20
base = statistics.median(r["rate"] for r in runs["none"])
unit = "iterations/s" if "alloc" in args.phases.split(",") or args.phases == "all" else "bytes/s"
print(f"AllocLockApp {args.phases}, {args.seconds:g} s runs, {args.rounds} rounds "
      f"(median [min-max]); the app allocated "
      f"{statistics.median(r['allocated_per_minute'] for r in runs['none']) / mib / 1024:.1f} "
      f"GiB/min with no profcpu")
cpu_unit = "app CPU ns/iteration" if unit == "iterations/s" else "app CPU ns/byte"
base_cpu = statistics.median(r["cpu_per_unit"] for r in runs["none"])
print(f"{'configuration':28} {unit:>26} {'vs none':>8} {cpu_unit:>21} {'vs none':>8} "
      f"{'nettrace MiB/min':>17}")
for config, label in CONFIGS:
    rates = [r["rate"] for r in runs[config]]
    median = statistics.median(rates)
    cpu = statistics.median(r["cpu_per_unit"] for r in runs[config])
    slowdown = "" if config == "none" else f"{(median / base - 1) * 100:+.1f}%"
    extra_cpu = "" if config == "none" else f"{(cpu / base_cpu - 1) * 100:+.1f}%"
    stream = ""
    if config == "on":
        stream = f"{statistics.median(r['per_minute'] for r in runs[config]) / mib:.1f}"
    print(f"{label:28} {median:>10.0f} [{min(rates):.0f}-{max(rates):.0f}] {slowdown:>8} "
          f"{cpu:>21.1f} {extra_cpu:>8} {stream:>17}")
on_per_minute = statistics.median(r["per_minute"] for r in runs["on"])
print(f"stream cap {CAP // mib} MiB a process; a 30-minute collection's budget "
      f"{BUDGET_PER_MINUTE / mib:.1f} MiB/min ({BURST_BYTES / mib:.1f} MiB banked): ", end="")
if on_per_minute <= BUDGET_PER_MINUTE:
    print("this stream fits whole")
else:
    excess = (on_per_minute - BUDGET_PER_MINUTE) / 60
    print(f"this stream is {on_per_minute / BUDGET_PER_MINUTE:.1f}x it; the budget starts "
          f"thinning its bulk events (GCAllocationTick first) after ~{BURST_BYTES / 2 / excess:.0f} s")
PYTHON
