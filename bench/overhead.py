#!/usr/bin/env python3
"""Overhead of profcpu next to `perf record -g` at the same frequencies, on
the same CPU-bound workload (bench/fixed_work.cc): the workload's slowdown
and the profiler's own CPU time while sampling. Both profilers attach to
the running workload by pid and stop when it exits. Each configuration
runs REPEAT times; medians are printed."""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

def cpu_seconds(pid):
    """CPU time of all the process's threads so far, in ns precision
    (/proc/PID/schedstat's first field, summed over its tasks)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            pass
    return total / 1e9


def run_once(workload, iterations, profiler_argv):
    """Returns (workload wall seconds, profiler CPU seconds while sampling,
    workload CPU seconds)."""
    work = subprocess.Popen([workload, str(iterations), "1.0"], stdout=subprocess.PIPE, text=True)
    profiler = None
    if profiler_argv:
        argv = [a.replace("{pid}", str(work.pid)) for a in profiler_argv]
        profiler = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out, _ = work.communicate()
    profiler_cpu = 0.0
    if profiler is not None:
        # Read the profiler's CPU time the moment the workload is done, before
        # it starts writing outputs (profcpu) or its report (perf).
        try:
            profiler_cpu = cpu_seconds(profiler.pid)
        except FileNotFoundError:
            profiler_cpu = float("nan")
        if profiler.wait(timeout=300) != 0:
            raise RuntimeError(f"the profiler failed (exit {profiler.returncode}): {' '.join(argv)}")
    wall = float(out.split()[0].split("=")[1])
    work_cpu = float(out.split()[1].split("=")[1])
    return wall, profiler_cpu, work_cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profcpu", required=True)
    parser.add_argument("--workload", required=True)
    parser.add_argument("--iterations", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--freqs", default="99,999")
    args = parser.parse_args()

    perf = "perf"
    have_perf = subprocess.run([perf, "--version"], capture_output=True).returncode == 0
    tmp = tempfile.mkdtemp(prefix="profcpu-bench-")
    baseline = statistics.median(
        run_once(args.workload, args.iterations, None)[0] for _ in range(args.repeat))
    print(f"workload: {os.path.basename(args.workload)} {args.iterations} iterations, "
          f"24-deep stacks; baseline {baseline:.3f} s (median of {args.repeat})")
    print(f"{'profiler':<22}{'freq':>6}{'workload s':>12}{'slowdown':>10}{'profiler CPU s':>16}"
          f"{'CPU % of run':>14}")
    for freq in [int(f) for f in args.freqs.split(",")]:
        configs = [("profcpu collect", [args.profcpu, "collect", "-pid", "{pid}", "-duration", "0",
                                        "-freq", str(freq), "-out", tmp])]
        if have_perf:
            configs.append(("perf record -g", [perf, "record", "-g", "-F", str(freq), "-e",
                                               "cpu-clock", "-p", "{pid}", "-o",
                                               os.path.join(tmp, "perf.data")]))
        for name, argv in configs:
            runs = [run_once(args.workload, args.iterations, argv) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            print(f"{name:<22}{freq:>6}{wall:>12.3f}{100 * (wall / baseline - 1):>9.1f}%"
                  f"{cpu:>16.3f}{100 * cpu / wall:>13.2f}%")
    if not have_perf:
        print("perf not found: install linux-perf for the comparison", file=sys.stderr)
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
