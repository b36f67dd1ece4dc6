#!/usr/bin/env python3
"""What the runtime events profcpu asks a .NET app for cost it: iterations per
second of tests/dotnet/ThroughputApp (computes, allocates, takes a contended
lock, throws now and then) with no EventPipe session; with a session of one
runtime-provider keyword at a time at level 4 and at level 5 (eventpipe_record);
with all of profcpu's keywords at level 5; and under `profcpu collect` with
-dotnet-events on and off. Each run starts the app afresh, lets it warm up,
starts the session (or profcpu), then counts the iterations of a window of
SECONDS inside the session. Runs go round by round (every configuration once
per round), so a change in the machine's load hits them all alike; the medians
of REPEAT rounds are printed, with the spread of the runs."""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(HERE)

# profcpu's keywords of Microsoft-Windows-DotNETRuntime
# (collector/dotnet/dotnet_events_session.cc).
KEYWORDS = [("GC", 0x1), ("Loader", 0x8), ("JIT", 0x10), ("Contention", 0x4000),
            ("Exception", 0x8000), ("Threading", 0x10000)]
ALL_KEYWORDS = 0x1 | 0x8 | 0x10 | 0x4000 | 0x8000 | 0x10000

# Names of the runtime provider's events this workload makes (ClrEtwAll.man;
# as TraceEvent names them).
EVENT_NAMES = {
    1: "GCStart", 2: "GCEnd", 3: "GCRestartEEEnd", 4: "GCHeapStats", 5: "GCCreateSegment",
    6: "GCFreeSegment", 7: "GCRestartEEBegin", 8: "GCSuspendEEEnd", 9: "GCSuspendEEBegin",
    10: "GCAllocationTick", 11: "GCCreateConcurrentThread", 13: "GCFinalizersEnd",
    14: "GCFinalizersBegin", 29: "FinalizeObject", 33: "PinObjectAtGCTime",
    35: "GCTriggered", 39: "GCDynamicEvent", 50: "ThreadPoolWorkerThreadStart",
    51: "ThreadPoolWorkerThreadStop", 54: "ThreadPoolWorkerThreadAdjustmentSample",
    55: "ThreadPoolWorkerThreadAdjustmentAdjustment", 56: "ThreadPoolWorkerThreadAdjustmentStats",
    57: "ThreadPoolWorkerThreadWait", 60: "ThreadPoolWorkingThreadCount",
    61: "ThreadPoolEnqueue", 62: "ThreadPoolDequeue", 63: "ThreadPoolIOEnqueue",
    64: "ThreadPoolIODequeue", 65: "ThreadPoolIOPack", 70: "ThreadCreating", 71: "ThreadRunning",
    80: "ExceptionThrown", 81: "ContentionStart", 90: "ContentionLockCreated",
    91: "ContentionStop", 141: "MethodLoad", 142: "MethodUnload", 143: "MethodLoadVerbose",
    144: "MethodUnloadVerbose", 145: "MethodJittingStarted",
    146: "MethodJitMemoryAllocatedForCode", 151: "DomainModuleLoad", 152: "ModuleLoad",
    154: "AssemblyLoad", 185: "MethodJitInliningSucceeded", 186: "MethodJitInliningFailed",
    188: "MethodJitTailCallSucceeded", 189: "MethodJitTailCallFailed", 202: "GCMarkWithType",
    204: "GCPerHeapHistory", 205: "GCGlobalHeapHistory", 209: "GCFitBucketInfo",
    250: "ExceptionCatchStart", 251: "ExceptionCatchStop", 252: "ExceptionFinallyStart",
    253: "ExceptionFinallyStop", 254: "ExceptionFilterStart", 255: "ExceptionFilterStop",
    256: "ExceptionThrownStop", 290: "KnownPathProbed", 291: "ResolutionAttempted",
    292: "AssemblyLoadContextResolvingHandlerInvoked",
    293: "AppDomainAssemblyResolveHandlerInvoked", 294: "AssemblyLoadFromResolveHandlerInvoked",
}


def build_app():
    work = tempfile.mkdtemp(prefix="profcpu-bench-dotnet-events-", dir="/var/tmp")
    shutil.copytree(os.path.join(SOURCE_ROOT, "tests", "dotnet", "ThroughputApp"),
                    os.path.join(work, "src"))
    subprocess.run(["dotnet", "build", os.path.join(work, "src"), "-c", "Release", "-o",
                    os.path.join(work, "out"), "-nologo", "-v", "q"], check=True,
                   capture_output=True)
    return work, os.path.join(work, "out", "ThroughputApp.dll")


def cpu_seconds(pid):
    """CPU time of all the process's threads so far (/proc/PID/task/*/schedstat):
    the app's and the runtime's, its EventPipe threads included."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / 1e9


class Run:
    def __init__(self, rate, cpu_per_iteration, bytes_, session_seconds, events=None):
        self.rate = rate
        self.cpu_per_iteration = cpu_per_iteration  # app CPU seconds per iteration
        self.bytes = bytes_
        self.session_seconds = session_seconds
        self.events = events or {}  # runtime event id -> count


def run_once(app, args, config, tmp):
    """One app run under CONFIG: (kind, level, keywords) with kind None (no
    session), "record" (eventpipe_record) or "profcpu" (keywords = extra flags)."""
    kind, level, keywords = config
    proc = subprocess.Popen(["dotnet", app, str(args.warmup)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        tool = None
        if kind == "record":
            out = os.path.join(tmp, "record.nettrace")
            session_seconds = args.seconds + 1.0
            tool = subprocess.Popen([args.record, "record", str(proc.pid), str(session_seconds),
                                     out, str(level), hex(keywords)],
                                    stdout=subprocess.PIPE, text=True)
            line = tool.stdout.readline()
            if not line.startswith("session "):
                raise RuntimeError(f"eventpipe_record: {line}{tool.stdout.read()}")
            time.sleep(0.3)
        elif kind == "profcpu":
            out = os.path.join(tmp, "profcpu")
            shutil.rmtree(out, ignore_errors=True)
            session_seconds = args.seconds + 3.5
            tool = subprocess.Popen([args.profcpu, "collect", "-pid", str(proc.pid), "-duration",
                                     str(session_seconds), "-out", out] + keywords,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # Its EventPipe session starts within ~0.5 s (the target is polled
            # every 200 ms); the same wait with -dotnet-events off.
            time.sleep(2.0)
        else:
            session_seconds = 0
            time.sleep(0.3)
        cpu = cpu_seconds(proc.pid)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(args.seconds)
        proc.stdin.write("stop\n")
        proc.stdin.flush()
        fields = dict(kv.split("=") for kv in proc.stdout.readline().split())
        cpu = cpu_seconds(proc.pid) - cpu
        rate = int(fields["iterations"]) / float(fields["seconds"])
        cpu_per_iteration = cpu / int(fields["iterations"])
        bytes_, events = 0, {}
        if kind == "record":
            for line in tool.stdout:
                parts = line.split()
                if parts[:1] == ["bytes"]:
                    bytes_ = int(parts[1])
                elif parts[:2] == ["event", "Microsoft-Windows-DotNETRuntime"]:
                    events[int(parts[2])] = events.get(int(parts[2]), 0) + int(parts[4])
                elif parts[:1] == ["error"]:
                    raise RuntimeError(f"eventpipe_record: {line}")
            tool.wait(timeout=60)
        elif kind == "profcpu":
            if tool.wait(timeout=300) != 0:
                raise RuntimeError(f"profcpu collect failed (exit {tool.returncode})")
            files = glob.glob(os.path.join(out, "*", "dotnet", "*.nettrace"))
            bytes_ = sum(os.path.getsize(f) for f in files)
        return Run(rate, cpu_per_iteration, bytes_, session_seconds, events)
    finally:
        if proc.poll() is None:
            proc.stdin.close()
            proc.wait(timeout=30)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profcpu", required=True)
    parser.add_argument("--record", required=True, help="eventpipe_record")
    parser.add_argument("--seconds", type=float, default=4, help="measured window per run")
    parser.add_argument("--warmup", type=float, default=2, help="app warm-up before a run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated configuration names")
    args = parser.parse_args()
    work, app = build_app()
    tmp = tempfile.mkdtemp(prefix="profcpu-bench-")

    configs = [("no session", (None, 0, 0))]
    for name, keyword in KEYWORDS:
        for level in (4, 5):
            configs.append((f"{name} {keyword:#x} L{level}", ("record", level, keyword)))
    configs.append((f"all {ALL_KEYWORDS:#x} L5", ("record", 5, ALL_KEYWORDS)))
    configs.append(("profcpu collect", ("profcpu", 0, [])))
    configs.append(("profcpu -dotnet-events off", ("profcpu", 0, ["-dotnet-events", "off"])))
    if args.only:
        wanted = args.only.split(",")
        configs = [c for c in configs if c[0] in wanted or c[0] == "no session"]

    runs = {name: [] for name, _ in configs}
    for _ in range(args.repeat):
        for name, config in configs:
            runs[name].append(run_once(app, args, config, tmp))

    print(f"ThroughputApp, {args.seconds:g} s windows inside the session after {args.warmup:g} s "
          f"warm-up; {os.cpu_count()} CPUs; median of {args.repeat} rounds, configurations "
          f"alternated")
    print(f"{'configuration':<28}{'iterations/s':>13}{'slowdown':>10}{'spread':>8}"
          f"{'CPU us/it':>10}{'CPU +':>7}{'nettrace B/s':>14}{'events/s':>10}"
          f"  most frequent events (/s)")
    base = statistics.median(r.rate for r in runs["no session"])
    base_cpu = statistics.median(r.cpu_per_iteration for r in runs["no session"])
    for name, _ in configs:
        rs = runs[name]
        rate = statistics.median(r.rate for r in rs)
        spread = 100 * (max(r.rate for r in rs) - min(r.rate for r in rs)) / rate
        cpu = statistics.median(r.cpu_per_iteration for r in rs)
        per_s = statistics.median(r.bytes / r.session_seconds if r.session_seconds else 0
                                  for r in rs)
        events = {}
        for r in rs:
            for event_id, count in r.events.items():
                events[event_id] = events.get(event_id, 0) + count / r.session_seconds / len(rs)
        total = sum(events.values())
        top = ", ".join(f"{EVENT_NAMES.get(i, i)} {n:.0f}"
                        for i, n in sorted(events.items(), key=lambda kv: -kv[1])[:3])
        print(f"{name:<28}{rate:>13.0f}{100 * (1 - rate / base):>9.1f}%{spread:>7.1f}%"
              f"{1e6 * cpu:>10.2f}{100 * (cpu / base_cpu - 1):>6.1f}%{per_s:>14.0f}"
              f"{total:>10.0f}  {top}".rstrip())
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
