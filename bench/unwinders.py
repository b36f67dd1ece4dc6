#!/usr/bin/env python3
"""libdwfl against libunwind on the same recordings (docs/unwinders.md).

Records each workload once per callgraph with `profcpu collect` (-callgraph
dwarf: every user stack unwound by CFI; -callgraph fp+cfi: the frame-pointer
chain's leaf repaired by CFI), then replays every recording through
unwinders_bench with each unwinder in its own process, and prints per
recording: samples, frames recovered (total and per sample), walks that
reached the thread's first frame and those cut short, the unwinder's CPU
time per sample (median of --repeat replays; all samples, and the second
half alone, once the files are read), peak RSS (and above the replay
without unwinding), and how many samples got the same chain from both.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def workloads(args):
    return {
        "leaf_callers": [args.leaf_callers, "writer", str(args.seconds)],
        "crypto_chain": [args.crypto_chain, str(args.seconds)],
        "fixed_work": [args.fixed_work, str(args.fixed_iterations), "0.2"],
        "busy_stacks": [args.busy_stacks, str(args.seconds), "2"],
    }


def record(args, argv, callgraph, out_dir):
    work = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    time.sleep(0.05)
    profiler = subprocess.run(
        [args.profcpu, "collect", "-pid", str(work.pid), "-duration", "0", "-freq",
         str(args.freq), "-callgraph", callgraph, "-out", out_dir],
        capture_output=True, text=True)
    work.wait()
    if profiler.returncode != 0:
        sys.exit(f"profcpu collect failed: {profiler.stderr[-2000:]}")
    return profiler.stdout.strip().splitlines()[-1]


def replay(args, run_dir, unwinder, chains):
    out = subprocess.run([args.bench, run_dir, unwinder, chains], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"unwinders_bench {unwinder} failed: {out.stderr}")
    return json.loads(out.stdout)


def agreement(a_path, b_path):
    """Samples whose chains match, one a prefix of the other, or neither;
    and of the matching, those only one unwinder said were cut short."""
    same = longer_a = longer_b = other = cut_differs = 0
    with open(a_path) as a, open(b_path) as b:
        for la, lb in zip(a, b):
            fa, fb = la.split(), lb.split()
            cut_a, cut_b = fa[-1:] == ["cut"], fb[-1:] == ["cut"]
            fa, fb = fa[:-1] if cut_a else fa, fb[:-1] if cut_b else fb
            if fa == fb:
                cut_differs += cut_a != cut_b
                same += 1
            elif len(fa) > len(fb) and fa[:len(fb)] == fb:
                longer_a += 1
            elif len(fb) > len(fa) and fb[:len(fa)] == fa:
                longer_b += 1
            else:
                other += 1
    return same, longer_a, longer_b, other, cut_differs


def main():
    parser = argparse.ArgumentParser()
    for name in ("profcpu", "bench", "leaf_callers", "crypto_chain", "fixed_work", "busy_stacks"):
        parser.add_argument("--" + name.replace("_", "-"), required=True)
    parser.add_argument("--workloads", default="leaf_callers,crypto_chain,fixed_work,busy_stacks")
    parser.add_argument("--callgraphs", default="dwarf,fp+cfi")
    parser.add_argument("--freq", type=int, default=999)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--fixed-iterations", type=int, default=40000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", help="keep the recordings in this directory")
    args = parser.parse_args()

    tmp = args.keep or tempfile.mkdtemp(prefix="unwinders.")
    os.makedirs(tmp, exist_ok=True)
    print(f"{'recording':<26}{'unwinder':<11}{'samples':>8}{'frames':>9}{'/sample':>8}"
          f"{'rooted':>8}{'cut':>7}{'us/sample':>10}{'warm us':>8}{'RSS MB':>8}{'+MB':>7}  "
          f"same chains (dwfl longer / libunwind longer / differ; same frames, cut differs)")
    table = workloads(args)
    for name in args.workloads.split(","):
        for callgraph in args.callgraphs.split(","):
            run_dir = record(args, table[name], callgraph, tmp)
            base = replay(args, run_dir, "none", os.devnull)
            results = {}
            for unwinder in ("libdwfl", "libunwind"):
                chains = os.path.join(tmp, f"{name}.{callgraph}.{unwinder}.chains")
                runs = [replay(args, run_dir, unwinder, chains) for _ in range(args.repeat)]
                r = runs[0]
                r["us"] = statistics.median(x["unwind_s"] for x in runs) * 1e6 / max(r["samples"], 1)
                r["warm"] = statistics.median(x["warm_us"] for x in runs)
                r["rss"] = max(x["max_rss_kb"] for x in runs) / 1024
                results[unwinder] = (r, chains)
            same, a_longer, b_longer, differ, cut_differs = agreement(results["libdwfl"][1],
                                                         results["libunwind"][1])
            label = f"{name} {callgraph}"
            for unwinder, (r, _) in results.items():
                per = r["frames"] / max(r["samples"], 1)
                extra = (f"  {same} ({a_longer} / {b_longer} / {differ}; {cut_differs})"
                         if unwinder == "libunwind" else "")
                print(f"{label:<26}{unwinder:<11}{r['samples']:>8}{r['frames']:>9}{per:>8.2f}"
                      f"{r['rooted']:>8}{r['truncated']:>7}{r['us']:>10.2f}{r['warm']:>8.2f}{r['rss']:>8.1f}"
                      f"{r['rss'] - base['max_rss_kb'] / 1024:>7.1f}{extra}")
                if callgraph.startswith("fp+cfi"):
                    print(f"{'':<26}{'':<11}  repaired {r['repaired']} (+{r['frames_added']} "
                          f"frames), whole {r['unchanged']}, rooted by CFI {r['cfi_whole']}, "
                          f"CFI only {r['cfi_only']}, not met {r['no_splice']}, "
                          f"disagreed {r['mismatch']}")
                label = ""
            sys.stdout.flush()
    if not args.keep:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
