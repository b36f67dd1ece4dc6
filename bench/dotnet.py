#!/usr/bin/env python3
"""Overhead on a .NET app: iterations per second of the test app's prime
finder (tests/dotnet/PrimeApp, perf maps on, its ASP.NET endpoint under
load) with no profiler, under `profcpu collect` and under `perf record -g`,
at the same frequency. Medians of REPEAT runs."""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))


def build_app(source_root):
    work = tempfile.mkdtemp(prefix="profcpu-bench-dotnet-", dir="/var/tmp")
    shutil.copytree(os.path.join(source_root, "tests", "dotnet", "PrimeApp"),
                    os.path.join(work, "src"))
    subprocess.run(["dotnet", "build", os.path.join(work, "src"), "-c", "Release", "-o",
                    os.path.join(work, "out"), "-nologo", "-v", "q"], check=True,
                   capture_output=True)
    return os.path.join(work, "out", "PrimeApp.dll")


def run_once(app, seconds, port, profiler):
    env = dict(os.environ, DOTNET_PerfMapEnabled="1")
    proc = subprocess.Popen(["dotnet", app, str(seconds), str(port)], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout.readline().strip() == "ready"
    prof = None
    if profiler:
        argv = [a.replace("{pid}", str(proc.pid)) for a in profiler]
        prof = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    proc.wait()
    if prof:
        prof.wait(timeout=300)
    fields = dict(kv.split("=") for kv in out.split())
    return int(fields["iterations"]) / float(fields["seconds"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profcpu", required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--freq", type=int, default=99)
    args = parser.parse_args()
    app = build_app(os.path.join(HERE, ".."))
    tmp = tempfile.mkdtemp(prefix="profcpu-bench-")
    port = 5390
    configs = [("no profiler", None),
               ("profcpu collect", [args.profcpu, "collect", "-pid", "{pid}", "-duration", "0",
                                    "-freq", str(args.freq), "-out", tmp])]
    if shutil.which("perf"):
        configs.append(("perf record -g", ["perf", "record", "-g", "-F", str(args.freq), "-e",
                                           "cpu-clock", "-p", "{pid}", "-o",
                                           os.path.join(tmp, "perf.data")]))
    print(f"PrimeApp, {args.seconds:g} s runs, perf maps on, {args.freq} Hz; "
          f"median of {args.repeat}")
    print(f"{'configuration':<20}{'iterations/s':>14}{'vs none':>10}")
    base = None
    for name, profiler in configs:
        rates = []
        for _ in range(args.repeat):
            port += 1
            rates.append(run_once(app, args.seconds, port, profiler))
        rate = statistics.median(rates)
        base = base or rate
        print(f"{name:<20}{rate:>14.2f}{100 * (rate / base - 1):>9.1f}%")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
