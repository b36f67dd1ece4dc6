#!/usr/bin/env python3
"""Overhead of profcpu's BPF paths (collector/bpf/):

1. On-CPU sampling, -backend bpf (stacks counted in the kernel) against
   -backend perf (every sample through a ring buffer to user space), on the
   CPU-bound fixed_work at 99, 999 and 4999 Hz.
2. -mode offcpu (a BPF program on every context switch) on context_switcher,
   paced to 20k context switches a second, with and without -callgraph
   fp+cfi (each switch-out also copies the user registers and up to 512
   bytes of user stack).
3. -backend bpf's stacks on cpu_shares_nofp (bpf_stacks.py): lost stacks,
   shares, BPF time and profcpu CPU per sample; with --old-profcpu, beside
   an older build's (main before inline stacks: the stack map).

For each: the workload's wall time and CPU time (the kernel-side cost of
sampling and of the sched_switch program lands there, in the context it
interrupts or switches), and profcpu's own CPU time while it ran. Each
configuration runs REPEAT times; medians are printed."""

import argparse
import os
import statistics
import subprocess
import tempfile

import bpf_stacks
from overhead import run_once


def measure(workload, iterations, argv, repeat):
    runs = [run_once(workload, iterations, argv) for _ in range(repeat)]
    return tuple(statistics.median(r[i] for r in runs) for i in range(3))


def row(name, freq, result, baseline):
    """The workload's extra CPU is shown as a share of one CPU over the run:
    what profiling costs the target, whatever its own CPU use."""
    wall, profiler_cpu, work_cpu = result
    print(f"{name:<30}{freq:>6}{wall:>9.3f}{100 * (wall / baseline[0] - 1):>8.1f}%"
          f"{work_cpu:>10.3f}{100 * (work_cpu - baseline[2]) / wall:>11.2f}%"
          f"{profiler_cpu:>13.3f}{100 * profiler_cpu / wall:>9.2f}%")


def header():
    print(f"{'profiler':<30}{'freq':>6}{'wall s':>9}{'slower':>9}{'work CPU':>10}"
          f"{'+CPU/wall':>12}{'profcpu CPU':>13}{'of run':>10}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profcpu", required=True)
    parser.add_argument("--fixed-work", required=True)
    parser.add_argument("--switcher", required=True)
    parser.add_argument("--iterations", type=int, default=12000)
    parser.add_argument("--switches", type=int, default=60000,
                        help="context_switcher round trips (two switches each, 20k/s)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--freqs", default="99,999,4999")
    parser.add_argument("--nofp", required=True, help="tests/fixtures/cpu_shares_nofp")
    parser.add_argument("--old-profcpu", help="an older profcpu to compare stacks with")
    parser.add_argument("--stack-seconds", type=int, default=10)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="profcpu-bench-bpf-")

    def profcpu(*extra):
        return [args.profcpu, "collect", "-pid", "{pid}", "-duration", "0", "-out", tmp, *extra]

    baseline = measure(args.fixed_work, args.iterations, None, args.repeat)
    print(f"1. on-CPU sampling: fixed_work {args.iterations} iterations (24-deep stacks), "
          f"baseline {baseline[0]:.3f} s wall, {baseline[2]:.3f} s CPU (median of {args.repeat})")
    header()
    for freq in [int(f) for f in args.freqs.split(",")]:
        for backend in ["perf", "bpf"]:
            result = measure(args.fixed_work, args.iterations,
                             profcpu("-freq", str(freq), "-backend", backend), args.repeat)
            row(f"profcpu -backend {backend}", freq, result, baseline)

    baseline = measure(args.switcher, args.switches, None, args.repeat)
    rate = 2 * args.switches / baseline[0]
    print(f"\n2. off-CPU: context_switcher {args.switches} round trips, {rate:,.0f} context "
          f"switches/s; baseline {baseline[0]:.3f} s wall, {baseline[2]:.3f} s CPU")
    header()
    # The perf events alone (what -mode offcpu keeps for mmap/comm/task
    # records) also cost at each switch: shown apart.
    row("profcpu -mode cpu (perf)", 1, measure(args.switcher, args.switches,
                                               profcpu("-freq", "1"), args.repeat), baseline)
    row("profcpu -mode offcpu", "-", measure(args.switcher, args.switches,
                                             profcpu("-mode", "offcpu"), args.repeat), baseline)
    row("profcpu -mode offcpu fp+cfi", "-",
        measure(args.switcher, args.switches, profcpu("-mode", "offcpu", "-callgraph", "fp+cfi"),
                args.repeat), baseline)
    row("profcpu -mode wall", 99, measure(args.switcher, args.switches,
                                          profcpu("-mode", "wall"), args.repeat), baseline)
    binaries = [("profcpu (inline stacks)", args.profcpu)]
    if args.old_profcpu:
        binaries.append(("old profcpu (stack map)", args.old_profcpu))
    bpf_stacks.run(binaries, args.nofp, args.stack_seconds, 999, args.repeat, tmp)
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
