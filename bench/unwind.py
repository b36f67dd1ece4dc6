#!/usr/bin/env python3
"""What each way of walking user stacks costs: profcpu -callgraph fp,
fp+cfi and dwarf, perf record -g and perf record --call-graph dwarf, at the
same frequencies, attached by pid to two workloads:
  fixed_work          CPU-bound, 24-deep frame-pointer stacks (every leaf has
                      its frame: fp+cfi's repair only confirms the chain);
  leaf_callers writer write(2) in a loop (nearly every sample's leaf is a
                      frameless libc wrapper: fp+cfi repairs them all).
Per configuration (median of REPEAT runs): the workload's slowdown against
an unprofiled run, the profiler's CPU time while sampling, how long it took
after the workload exited to write its outputs, and the recording's bytes
per sample (profcpu: recording.zst as written, and as raw records; perf:
perf.data)."""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import cpu_seconds  # noqa: E402


def workload_argv(name, args):
    if name == "fixed_work":
        return [args.fixed_work, str(args.iterations), "1.0"]
    return [args.leaf_callers, "writer", str(args.seconds)]


def work_done(name, out):
    """The workload's own measure: seconds for fixed_work (lower is better),
    write calls for leaf_callers (higher is better)."""
    if name == "fixed_work":
        return float(re.search(r"wall=([\d.]+)", out).group(1))
    return float(re.search(r"writes=(\d+)", out).group(1))


def samples_of(run_dir, perf_data):
    if perf_data:
        out = subprocess.run(["perf", "script", "-F", "time", "-i", perf_data],
                             capture_output=True, text=True).stdout
        return sum(1 for line in out.splitlines() if line.strip())
    with open(os.path.join(run_dir, "metadata.json")) as f:
        return json.load(f)["samples"]["total"]


def run_once(name, args, profiler_argv, tmp):
    work = subprocess.Popen(workload_argv(name, args), stdout=subprocess.PIPE, text=True)
    if name != "fixed_work":
        time.sleep(0.05)
    profiler = None
    out_dir = tempfile.mkdtemp(dir=tmp)
    perf_data = ""
    if profiler_argv:
        argv = [a.replace("{pid}", str(work.pid)).replace("{out}", out_dir) for a in profiler_argv]
        if "perf.data" in " ".join(argv):
            perf_data = os.path.join(out_dir, "perf.data")
        profiler = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    text=True)
    out, _ = work.communicate()
    ended = time.monotonic()
    result = {"work": work_done(name, out)}
    if profiler is None:
        return result
    try:
        result["cpu"] = cpu_seconds(profiler.pid)
    except FileNotFoundError:
        result["cpu"] = float("nan")
    printed, _ = profiler.communicate(timeout=600)
    result["outputs_s"] = time.monotonic() - ended
    if profiler.returncode != 0:
        raise RuntimeError(f"the profiler failed (exit {profiler.returncode}): {' '.join(argv)}")
    run_dir = printed.strip().splitlines()[-1] if not perf_data else ""
    samples = samples_of(run_dir, perf_data)
    size = os.path.getsize(perf_data if perf_data else os.path.join(run_dir, "recording.zst"))
    result["bytes_per_sample"] = size / max(samples, 1)
    result["samples"] = samples
    if run_dir:
        raw = subprocess.run(["zstd", "-dc", os.path.join(run_dir, "recording.zst")],
                             capture_output=True).stdout
        result["raw_per_sample"] = len(raw) / max(samples, 1)
    subprocess.run(["rm", "-rf", out_dir])
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profcpu", required=True)
    parser.add_argument("--fixed-work", required=True)
    parser.add_argument("--leaf-callers", required=True)
    parser.add_argument("--iterations", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--freqs", default="99,999,4999")
    args = parser.parse_args()

    have_perf = subprocess.run(["perf", "--version"], capture_output=True).returncode == 0
    tmp = tempfile.mkdtemp(prefix="profcpu-bench-")
    for name in ("fixed_work", "leaf_callers"):
        base = statistics.median(run_once(name, args, None, tmp)["work"] for _ in range(args.repeat))
        unit = "s" if name == "fixed_work" else "writes"
        print(f"\n{name}: unprofiled {base:.3f} {unit} (median of {args.repeat})")
        print(f"{'profiler':<30}{'freq':>6}{'slowdown':>10}{'CPU % of run':>14}"
              f"{'outputs s':>11}{'samples':>9}{'B/sample':>10}{'raw B/sample':>14}")
        for freq in [int(f) for f in args.freqs.split(",")]:
            configs = []
            for callgraph in ("fp", "fp+cfi", "dwarf"):
                configs.append((f"profcpu -callgraph {callgraph}",
                                [args.profcpu, "collect", "-pid", "{pid}", "-duration", "0",
                                 "-freq", str(freq), "-callgraph", callgraph, "-out", "{out}"]))
            if have_perf:
                for label, graph in (("perf record -g", ["-g"]),
                                     ("perf record --call-graph dwarf", ["--call-graph", "dwarf"])):
                    configs.append((label, ["perf", "record", *graph, "-F", str(freq), "-e",
                                            "cpu-clock", "-p", "{pid}", "-o", "{out}/perf.data"]))
            for label, argv in configs:
                runs = [run_once(name, args, argv, tmp) for _ in range(args.repeat)]
                work = statistics.median(r["work"] for r in runs)
                slowdown = work / base - 1 if name == "fixed_work" else base / work - 1
                # CPU share of the time the workload ran (fixed_work's wall, or its fixed seconds).
                run_s = work if name == "fixed_work" else args.seconds
                cpu = statistics.median(r["cpu"] for r in runs)
                outputs = statistics.median(r["outputs_s"] for r in runs)
                samples = statistics.median(r["samples"] for r in runs)
                per = statistics.median(r["bytes_per_sample"] for r in runs)
                raw = statistics.median(r.get("raw_per_sample", float("nan")) for r in runs)
                print(f"{label:<30}{freq:>6}{100 * slowdown:>9.1f}%{100 * cpu / run_s:>13.2f}%"
                      f"{outputs:>11.2f}{samples:>9.0f}{per:>10.1f}{raw:>14.1f}")
    if not have_perf:
        print("perf not found: install linux-perf for the comparison", file=sys.stderr)
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
