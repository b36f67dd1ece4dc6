#!/usr/bin/env python3
"""What each way of walking user stacks costs: profcpu -callgraph fp,
fp+cfi and dwarf, perf record -g and perf record --call-graph dwarf, at the
same frequencies, attached by pid to two workloads:
  fixed_work          CPU-bound, 24-deep frame-pointer stacks (every leaf has
                      its frame: fp+cfi's repair only confirms the chain);
  leaf_callers writer write(2) in a loop (nearly every sample's leaf is a
                      frameless libc wrapper: fp+cfi repairs them all);
  crypto_chain        48 frame-pointer frames (~17 KiB of stack) hashing with
                      libcrypto's SHA-256 through a frameless shim that keeps
                      a table in rbp: the kernel's chain is garbage from the
                      leaf, only CFI over a deep enough copy roots the stack.
fp+cfi runs both at its default copy (32 KiB) and at 512 bytes (the default
before issue 26); the "rooted %" column is the share of samples whose user
stack reaches a thread's start (start_thread, clone3, _start, ...).
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


ROOT_FRAMES = ("start_thread", "clone3", "clone", "__clone", "_start", "__libc_start_main",
               "__libc_start_call_main")


def workload_argv(name, args):
    if name == "fixed_work":
        return [args.fixed_work, str(args.iterations), "1.0"]
    if name == "crypto_chain":
        return [args.crypto_chain, str(args.seconds), "1"]
    return [args.leaf_callers, "writer", str(args.seconds)]


def rooted_share(run_dir):
    """Of the samples in folded_stacks.out (root first, after the process
    name), the share whose outermost frame is a thread's start."""
    total = rooted = 0
    with open(os.path.join(run_dir, "folded_stacks.out"), errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            total += int(count)
            if len(frames) > 1 and frames[1] in ROOT_FRAMES:
                rooted += int(count)
    return rooted / max(total, 1)


def work_done(name, out):
    """The workload's own measure: seconds for fixed_work (lower is better),
    write calls for leaf_callers (higher is better)."""
    if name == "fixed_work":
        return float(re.search(r"wall=([\d.]+)", out).group(1))
    if name == "crypto_chain":
        return float(re.search(r"digests=(\d+)", out).group(1))
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
        result["rooted"] = rooted_share(run_dir)
    subprocess.run(["rm", "-rf", out_dir])
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--profcpu", required=True)
    parser.add_argument("--fixed-work", required=True)
    parser.add_argument("--leaf-callers", required=True)
    parser.add_argument("--crypto-chain", required=True)
    parser.add_argument("--workloads", default="fixed_work,leaf_callers,crypto_chain")
    parser.add_argument("--callgraphs", default="fp,fp+cfi,512,fp+cfi,dwarf",
                        help="profcpu -callgraph values to compare (fp+cfi,512 is the default "
                        "before issue 26)")
    parser.add_argument("--no-perf", action="store_true", help="skip perf record")
    parser.add_argument("--iterations", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--freqs", default="99,999,4999")
    args = parser.parse_args()

    have_perf = not args.no_perf and subprocess.run(
        ["perf", "--version"], capture_output=True).returncode == 0
    # "fp,fp+cfi,512,fp+cfi,dwarf": a number belongs to the mode before it.
    callgraphs = []
    for part in args.callgraphs.split(","):
        if part.isdigit() and callgraphs:
            callgraphs[-1] += "," + part
        else:
            callgraphs.append(part)
    tmp = tempfile.mkdtemp(prefix="profcpu-bench-")
    for name in args.workloads.split(","):
        base = statistics.median(run_once(name, args, None, tmp)["work"] for _ in range(args.repeat))
        unit = {"fixed_work": "s", "crypto_chain": "digests"}.get(name, "writes")
        print(f"\n{name}: unprofiled {base:.3f} {unit} (median of {args.repeat})")
        print(f"{'profiler':<30}{'freq':>6}{'slowdown':>10}{'CPU % of run':>14}"
              f"{'outputs s':>11}{'samples':>9}{'B/sample':>10}{'raw B/sample':>14}"
              f"{'CPU us/sample':>14}{'rooted %':>10}")
        for freq in [int(f) for f in args.freqs.split(",")]:
            configs = []
            for callgraph in callgraphs:
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
                rooted = statistics.median(r.get("rooted", float("nan")) for r in runs)
                print(f"{label:<30}{freq:>6}{100 * slowdown:>9.1f}%{100 * cpu / run_s:>13.2f}%"
                      f"{outputs:>11.2f}{samples:>9.0f}{per:>10.1f}{raw:>14.1f}"
                      f"{1e6 * cpu / max(samples, 1):>14.1f}{100 * rooted:>9.1f}%", flush=True)
    if not have_perf:
        print("perf not found: install linux-perf for the comparison", file=sys.stderr)
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
