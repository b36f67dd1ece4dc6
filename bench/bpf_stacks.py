"""Section 3 of bench/bpf.py: -backend bpf's stacks on cpu_shares_nofp, a
build whose rbp holds data (thousands of distinct made-up user chains), for
each profcpu binary given (this build's inline stacks; a build of an older
main for its stack map). Per row: samples, lost stacks, the burn_* shares
(truth 20/30/50), the BPF program's time per sample (bpf_prog_info
run_time_ns / run_cnt, with kernel.bpf_stats_enabled=1 for the run) and
profcpu's user-space CPU per sample while collecting."""

import collections
import json
import os
import subprocess
import time

from overhead import cpu_seconds

STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"
WORKERS = ("burn_twenty_percent", "burn_thirty_percent", "burn_fifty_percent")


def program_names():
    """{program id: name} of every loaded BPF program (bpftool)."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                         check=True).stdout
    return {p["id"]: p.get("name", "") for p in json.loads(out)}


def program_stats(pid, names):
    """{name: (run_time_ns, run_cnt)} of the BPF programs process `pid` holds,
    from /proc/PID/fdinfo (run_time_ns and run_cnt count while stats are on)."""
    stats = collections.defaultdict(lambda: [0, 0])
    fd_dir = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fd_dir):
        try:
            with open(os.path.join(fd_dir, fd), encoding="utf-8") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if "prog_id" not in fields or "run_cnt" not in fields:
            continue
        name = names.get(int(fields["prog_id"]), "?")
        stats[name][0] += int(fields["run_time_ns"])
        stats[name][1] += int(fields["run_cnt"])
    return {name: tuple(v) for name, v in stats.items()}


def shares(run_dir):
    counts = collections.Counter()
    with open(os.path.join(run_dir, "folded_stacks.out"), encoding="utf-8") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            for frame in stack.split(";"):
                if frame in WORKERS:
                    counts[frame] += int(count)
    total = sum(counts.values()) or 1
    return [100.0 * counts[w] / total for w in WORKERS]


def measure(profcpu, nofp, seconds, freq, out_dir):
    """One run: (samples, lost stacks, shares, ns in BPF per sample, profcpu
    user-space µs per sample)."""
    target = subprocess.Popen([nofp])
    try:
        time.sleep(0.3)
        argv = [profcpu, "collect", "-pid", str(target.pid), "-duration", str(seconds),
                "-freq", str(freq), "-backend", "bpf", "-out", out_dir]
        profiler = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    text=True)
        # Just before collection ends (the pipeline after it is not the
        # collector's cost): the program's counters and profcpu's CPU.
        time.sleep(seconds - 0.5)
        stats = program_stats(profiler.pid, program_names())
        profiler_cpu = cpu_seconds(profiler.pid)
        out, _ = profiler.communicate(timeout=300)
    finally:
        target.kill()
        target.wait()
    run_dir = out.strip().splitlines()[-1]
    with open(os.path.join(run_dir, "metadata.json"), encoding="utf-8") as f:
        samples = json.load(f)["samples"]
    run_ns, runs = stats.get("on_sample", (0, 0))
    return (samples["total"], samples["lost_stacks"], shares(run_dir),
            run_ns / runs if runs else float("nan"),
            1e6 * profiler_cpu / runs if runs else float("nan"))


def run(binaries, nofp, seconds, freq, repeat, out_dir):
    """binaries: [(label, path)]. Prints one row per run."""
    with open(STATS_SYSCTL, encoding="utf-8") as f:
        stats_before = f.read().strip()
    print(f"\n3. -backend bpf stacks: cpu_shares_nofp, {freq} Hz, {seconds} s "
          f"(truth 20/30/50; BPF time per sample with kernel.bpf_stats_enabled=1)")
    print(f"{'profcpu':<28}{'samples':>9}{'lost stk':>10}{'lost %':>8}{'shares 20/30/50':>21}"
          f"{'BPF ns/smp':>12}{'user us/smp':>13}")
    try:
        with open(STATS_SYSCTL, "w", encoding="utf-8") as f:
            f.write("1")
        for label, path in binaries:
            for _ in range(repeat):
                total, lost, share, bpf_ns, user_us = measure(path, nofp, seconds, freq, out_dir)
                # A sample whose stack was lost still counts (as a bare comm frame).
                print(f"{label:<28}{total:>9}{lost:>10}{100.0 * lost / max(total, 1):>7.1f}%"
                      f"{'/'.join(f'{s:.1f}' for s in share):>21}{bpf_ns:>12.0f}{user_us:>13.1f}")
    finally:
        with open(STATS_SYSCTL, "w", encoding="utf-8") as f:
            f.write(stats_before)
