"""Runs a command several times on one input file and prints its speed and
peak memory: MB/s of input per second of wall time and per second of CPU
time (the better figure on a busy machine), and the peak RSS. Used by
bench/fold.sh and bench/render.sh.

  throughput.py --label NAME --input FILE [--runs N] [--stdout FILE] -- CMD ARGS...
"""

import argparse
import os
import subprocess
import sys
import time


def run_once(argv, stdout_path):
    with open(stdout_path, "wb") as out:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed with {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", required=True)
    parser.add_argument("--input", required=True, help="the file whose size the rates use")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stdout", default=os.devnull)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    size = os.path.getsize(args.input)
    best_wall = best_cpu = float("inf")
    peak = 0
    for _ in range(args.runs):
        wall, cpu, rss = run_once(argv, args.stdout)
        best_wall, best_cpu, peak = min(best_wall, wall), min(best_cpu, cpu), max(peak, rss)
    mib = size / (1 << 20)
    print(f"{args.label:<28} {mib:8.1f} MiB in {best_wall:7.3f} s wall, {best_cpu:7.3f} s CPU: "
          f"{mib / best_wall:7.1f} MiB/s wall, {mib / max(best_cpu, 1e-9):7.1f} MiB/s CPU; "
          f"peak RSS {peak / (1 << 20):7.1f} MiB")


if __name__ == "__main__":
    main()
