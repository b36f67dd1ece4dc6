"""How long users wait for outputs (issue 18): `profcpu postprocess` of a run
archive next to perf's own pipeline (perf script | stackcollapse-perf.pl |
flamegraph.pl) on the same workloads, `profcpu collect`'s time from the end
of sampling to exit, and `profcpu fold` next to stackcollapse-perf.pl on an
8 MB perf script text. With --old, the same archives go through the profcpu
binary from before the speed work too, and every output is compared byte for
byte. Prints one table and the issue's targets. Run by bench/postprocess.sh.

Workloads (--only, or the ONLY environment variable, picks some):
  a  demo_workload 6 (2 threads), 4999 Hz
  b  busy_stacks 12 2, 4999 Hz (~60k samples of deep, all-distinct stacks)
  c  demo_workload 20, 4999 Hz: ~200k samples on a quiet 2-core machine, the
     workload issue 18's "~200k samples in <= 1 s, <= 150 MB" was set against
  e  busy_stacks 40 2, 4999 Hz: the worst case, ~200k deep, all-distinct
     stacks (~800 MB of perf script text); slow, SKIP_WORST=1 leaves it out
  f  deep_tree 12 2, 4999 Hz: a recursive interpreter of random expression
     trees, tens of thousands of distinct stacks ~60 frames deep (a deep
     workload shaped unlike busy_stacks)
  d  1M samples grown from busy_stacks 12 2 by bench/grow_recording
  collect, fold (see below)

Every timing is the median of --runs (profcpu and perl alternate, so a
burst of load hurts both); wall seconds, CPU seconds (user + system, the
pipeline's processes summed) and peak RSS (the largest process, as
/usr/bin/time reports it; for the perl pipeline that is not the sum of its
three stages).
"""

import argparse
import datetime
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import zipfile

# Outputs that carry the run's own time or folder name, so they differ from
# run to run whatever the code: compared by content where they have one.
NOT_COMPARED = {"profcpu.log", "prof.tar.gz"}


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


class Runner:
    """Runs commands one at a time under /usr/bin/time, whose figures are
    the command's own: a child this process spawned directly would report
    this process's peak RSS as its own when larger (Linux keeps the
    high-water mark of the memory an exec replaces)."""

    def __init__(self, env, work):
        self.env = env
        self.usage = os.path.join(work, "usage.txt")

    def run(self, argv, cwd=None, stdout_path=None):
        out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
        try:
            start = time.monotonic()
            proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", self.usage, *argv], cwd=cwd,
                                  stdout=out, stderr=subprocess.PIPE, env=self.env)
            wall = time.monotonic() - start
            end = time.time()
        finally:
            if stdout_path:
                out.close()
        if proc.returncode != 0:
            sys.exit(f"{' '.join(map(str, argv))} failed with {proc.returncode}:\n{proc.stderr.decode()[-2000:]}")
        with open(self.usage) as f:
            user, system, kib = f.read().split()[-3:]
        return {"wall": wall, "cpu": float(user) + float(system), "rss": int(kib) * 1024, "end": end}


def median_of(results):
    return {k: statistics.median(r[k] for r in results) for k in ("wall", "cpu", "rss")} | {"runs": results}


# --- workloads ------------------------------------------------------------

def profcpu_record(runner, profcpu, out, argv, extra=()):
    """profcpu record; returns the run folder."""
    os.makedirs(out, exist_ok=True)
    proc = subprocess.run([profcpu, "record", "-out", out, *extra, "--", *argv],
                          capture_output=True, text=True, env=runner.env)
    if proc.returncode != 0:
        sys.exit(f"profcpu record failed:\n{proc.stderr}")
    return proc.stdout.strip().splitlines()[-1]


def perf_record(runner, out_dir, argv):
    """perf record -g of the same workload; returns perf.data and how many
    samples it holds."""
    os.makedirs(out_dir, exist_ok=True)
    data = os.path.join(out_dir, "perf.data")
    subprocess.run(["perf", "record", "-q", "-F", "4999", "-g", "-o", data, "--", *argv],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=runner.env)
    lines = subprocess.run(["perf", "script", "-i", data, "-F", "tid"], capture_output=True, check=True,
                           env=runner.env).stdout.count(b"\n")
    return data, lines


def samples_of(run_dir):
    with open(os.path.join(run_dir, "metadata.json")) as f:
        return json.load(f)["samples"]["total"]


def archive_only(run_dir, dest):
    """A folder with the run's prof.tar.gz and nothing else."""
    os.makedirs(dest)
    shutil.copy(os.path.join(run_dir, "prof.tar.gz"), dest)
    return os.path.join(dest, "prof.tar.gz")


def grown_archive(args, runner, work):
    """(d): a -callgraph fp recording of busy_stacks grown to a machine-wide
    minute by bench/grow_recording, packed as prof.tar.gz with the source's
    symbol snapshot (postprocess reads nothing else)."""
    src = profcpu_record(runner, args.profcpu, os.path.join(work, "d-source"),
                         [args.busy_stacks, "12", "2"], ["-freq", "4999", "-callgraph", "fp"])
    grown = os.path.join(work, "d-grown")
    os.makedirs(grown)
    subprocess.run([args.grow_recording, os.path.join(src, "recording.zst"),
                    os.path.join(grown, "recording.zst"), str(args.large_samples), "60", "16", "999"],
                   check=True, env=runner.env)
    shutil.copy(os.path.join(src, "symbols.bin"), grown)
    archive = os.path.join(grown, "prof.tar.gz")
    with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
        for name in ("recording.zst", "symbols.bin"):
            tar.add(os.path.join(grown, name), arcname=name)
    shutil.rmtree(src)
    return archive


# --- measuring ------------------------------------------------------------

def postprocess_once(runner, binary, archive, parent, extra=()):
    """postprocess in PARENT/run, a fresh folder holding only the archive
    (always named run: the perfview export and metadata.json carry the
    folder's name)."""
    shutil.rmtree(parent, ignore_errors=True)
    dest = os.path.join(parent, "run")
    os.makedirs(dest)
    shutil.copy(archive, dest)
    return runner.run([binary, "postprocess", "-dir", dest, *extra])


def perl_once(runner, flamegraph, perf_data, dest):
    os.makedirs(dest, exist_ok=True)
    pipeline = ('set -o pipefail; perf script -i "$1" 2>/dev/null | perl "$2/stackcollapse-perf.pl" '
                '| perl "$2/flamegraph.pl" > "$3"')
    return runner.run(["bash", "-c", pipeline, "bash", perf_data, flamegraph, os.path.join(dest, "out.svg")])


def stage_line(run_dir):
    """profcpu.log's last 'outputs built in' line, from 'outputs built' on."""
    line = None
    with open(os.path.join(run_dir, "profcpu.log"), errors="replace") as f:
        for text in f:
            if "outputs built in" in text:
                line = text[text.index("outputs built in"):].strip()
    return line


def digest_stream(f):
    h = hashlib.sha256()
    for block in iter(lambda: f.read(1 << 22), b""):
        h.update(block)
    return h.hexdigest()


def digest(path):
    with open(path, "rb") as f:
        return digest_stream(f)


def comparable(run_dir):
    """name -> sha256 of every output worth comparing; a .trace.zip by its
    members' contents (the zip stamps each entry with the time it was made)."""
    out = {}
    for name in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, name)
        if name in NOT_COMPARED or not os.path.isfile(path):
            continue
        if name.endswith(".trace.zip"):
            with zipfile.ZipFile(path) as z:
                for member in sorted(z.namelist()):
                    with z.open(member) as f:
                        out[f"{name}/{member}"] = digest_stream(f)
        else:
            out[name] = digest(path)
    return out


def compare(new_dir, old_dir):
    new, old = comparable(new_dir), comparable(old_dir)
    differ = sorted(n for n in new.keys() | old.keys() if new.get(n) != old.get(n))
    return ("identical" if not differ else "DIFFER: " + ", ".join(differ)), sorted(new)


def measure_postprocess(args, runner, work, key, label, archive, perf_data=None):
    """The timed runs of one workload; returns its row."""
    row = {"workload": key, "label": label}
    new, old, perl = [], [], []
    new_parent, old_parent = os.path.join(work, f"{key}-new"), os.path.join(work, f"{key}-old")
    new_dir, old_dir = os.path.join(new_parent, "run"), os.path.join(old_parent, "run")
    runs = args.large_runs if key == "d" else args.runs
    for i in range(runs):
        log(f"{label}: run {i + 1}/{runs}")
        new.append(postprocess_once(runner, args.profcpu, archive, new_parent))
        if args.old:
            old.append(postprocess_once(runner, args.old, archive, old_parent))
        if perf_data and i < args.perl_runs:
            perl.append(perl_once(runner, args.flamegraph, perf_data, os.path.join(work, f"{key}-perl")))
    row["samples"] = samples_of(new_dir)
    row["stages"] = stage_line(new_dir)
    row["new"] = median_of(new)
    row["perf_script_mb"] = os.path.getsize(os.path.join(new_dir, "perf_script.out")) / 1e6
    if perl:
        row["perl"] = median_of(perl)
    if args.old:
        row["old"] = median_of(old)
        row["old_stages"] = stage_line(old_dir)
        verdict, names = compare(new_dir, old_dir)
        row["outputs"] = verdict
        row["compared"] = names
        if key != "d":
            # The exports too, once each (not timed): -format pprof,perfview.
            for binary, parent in ((args.profcpu, new_parent), (args.old, old_parent)):
                postprocess_once(runner, binary, archive, parent, ["-format", "pprof,perfview"])
            row["exports"], names = compare(new_dir, old_dir)
            row["compared_exports"] = names
    for d in (new_parent, old_parent):
        shutil.rmtree(d, ignore_errors=True)
    return row


def log_time(line):
    """The wall time of a profcpu.log line (2026-11-27T09:23:40.590+00:00 ...)."""
    stamp = line.split(" ", 1)[0]
    return datetime.datetime.fromisoformat(stamp).timestamp()


def measure_collect(args, runner, work, binary, label):
    """profcpu collect -duration 6 of the demo workload at 4999 Hz: seconds
    from 'collection stopped' (the log) to the command's exit."""
    results = []
    for i in range(args.runs):
        log(f"collect ({label}): run {i + 1}/{args.runs}")
        target = subprocess.Popen([args.demo_workload, "30"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        out = os.path.join(work, f"collect-{label}")
        shutil.rmtree(out, ignore_errors=True)
        try:
            time.sleep(0.5)
            r = runner.run([binary, "collect", "-pid", str(target.pid), "-freq", "4999",
                            "-duration", "6", "-out", out])
        finally:
            target.kill()
            target.wait()
        run_dir = os.path.join(out, os.listdir(out)[0])
        stopped = None
        with open(os.path.join(run_dir, "profcpu.log"), errors="replace") as f:
            for text in f:
                if "collection stopped" in text:
                    stopped = log_time(text)
        r["after_stop"] = r["end"] - stopped
        r["samples"] = samples_of(run_dir)
        r["stages"] = stage_line(run_dir)
        results.append(r)
        shutil.rmtree(out)
    return {"after_stop": statistics.median(r["after_stop"] for r in results),
            "rss": statistics.median(r["rss"] for r in results),
            "samples": results[-1]["samples"], "stages": results[-1]["stages"]}


def eight_mb_script(perf_data, dest, size):
    """The first `size` bytes of perf script's text of perf_data, cut at a
    sample's end (a blank line)."""
    text = subprocess.run(["perf", "script", "-i", perf_data], capture_output=True, check=True).stdout
    if len(text) < size:
        sys.exit(f"perf script gave {len(text)} bytes, fewer than {size}")
    cut = text.index(b"\n\n", size) + 2
    with open(dest, "wb") as f:
        f.write(text[:cut])
    return cut


def measure_fold(args, runner, work, perf_data):
    script = os.path.join(work, "fold-input.txt")
    size = eight_mb_script(perf_data, script, args.fold_bytes)
    row = {"bytes": size}
    tools = [("new", [args.profcpu, "fold", script])]
    if args.old:
        tools.append(("old", [args.old, "fold", script]))
    tools.append(("perl", ["perl", os.path.join(args.flamegraph, "stackcollapse-perf.pl"), script]))
    results = {k: [] for k, _ in tools}
    for i in range(args.runs):
        log(f"fold: run {i + 1}/{args.runs}")
        for key, argv in tools:
            results[key].append(runner.run(argv, stdout_path=os.path.join(work, f"fold-{key}.out")))
    for key in results:
        row[key] = median_of(results[key])
    same = all(digest(os.path.join(work, f"fold-{k}.out")) == digest(os.path.join(work, "fold-perl.out"))
               for k in results)
    row["outputs"] = "identical" if same else "DIFFER"
    return row


# --- report ---------------------------------------------------------------

def fmt_s(r):
    return "-" if r is None else f"{r['wall']:.2f}"


def fmt_mb(r):
    return "-" if r is None else f"{r['rss'] / (1 << 20):.0f}"


def print_report(args, rows, collect, fold, load):
    print(f"\n{datetime.date.today()}, {os.cpu_count()} CPUs; load average (1 min) {load[0]:.2f} at the start, "
          f"{load[1]:.2f} at the end")
    print(f"profcpu postprocess -dir D (D holds only prof.tar.gz), median of {args.runs} "
          f"({args.large_runs} for d); wall s, CPU s, peak RSS MiB; perl (median of {args.perl_runs}): "
          "perf script | stackcollapse-perf.pl | flamegraph.pl on perf record -F 4999 -g of the same workload")
    head = ("workload", "samples", "perf samples", "perf_script MB", "profcpu s", "CPU s", "RSS MiB", "old s", "old MiB",
            "perl s", "perl CPU s", "perl MiB", "perl/profcpu", "old/profcpu", "outputs vs old", "exports vs old")
    table = []
    for r in rows:
        new, old, perl = r["new"], r.get("old"), r.get("perl")
        table.append((r["workload"], f"{r['samples']:,}",
                      "-" if r.get("perf_samples") is None else f"{r['perf_samples']:,}",
                      f"{r['perf_script_mb']:.0f}", fmt_s(new),
                      f"{new['cpu']:.2f}", fmt_mb(new), fmt_s(old), fmt_mb(old), fmt_s(perl),
                      "-" if perl is None else f"{perl['cpu']:.2f}", fmt_mb(perl),
                      "-" if perl is None else f"{perl['wall'] / new['wall']:.1f}x",
                      "-" if old is None else f"{old['wall'] / new['wall']:.2f}x",
                      r.get("outputs", "-"), r.get("exports", "-")))
    widths = [max([len(h)] + [len(t[i]) for t in table]) for i, h in enumerate(head)]
    if table:  # --only collect or fold measures no postprocess
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for t in table:
            print("  ".join(c.ljust(w) for c, w in zip(t, widths)))
    for r in rows:
        print(f"  {r['workload']}: {r['label']}")
    if rows:
        print("\nstages of the last run (profcpu.log):")
    for r in rows:
        print(f"  {r['workload']}: {r['stages']}")
        if r.get("old_stages"):
            print(f"  {r['workload']} (old): {r['old_stages']}")
    if collect:
        print(f"\nprofcpu collect -pid (demo_workload) -freq 4999 -duration 6, median of {args.runs}: "
              "seconds from 'collection stopped' to exit")
        for label, c in collect.items():
            print(f"  {label}: {c['after_stop']:.2f} s after sampling ({c['samples']:,} samples), "
                  f"peak RSS {c['rss'] / (1 << 20):.0f} MiB; {c['stages']}")
    if fold:
        print(f"\nfold, {fold['bytes'] / 1e6:.1f} MB of perf script text, median of {args.runs}:")
        for key, label in (("new", "profcpu fold"), ("old", "profcpu fold (old)"), ("perl", "stackcollapse-perf.pl")):
            if key in fold:
                print(f"  {label:<22} {fold[key]['wall']:7.3f} s wall {fold[key]['cpu']:7.3f} s CPU "
                      f"{fold[key]['rss'] / (1 << 20):6.0f} MiB")
        print(f"  stackcollapse-perf.pl / profcpu fold: {fold['perl']['wall'] / fold['new']['wall']:.1f}x; "
              f"outputs {fold['outputs']}")
    print("\nissue 18 targets:")
    by = {r["workload"]: r for r in rows}

    def verdict(ok):
        return "ok" if ok else "MISSED"
    if "a" in by and "perl" in by["a"]:
        ratio = by["a"]["perl"]["wall"] / by["a"]["new"]["wall"]
        print(f"  (a) >= 25x the perl pipeline: {ratio:.1f}x {verdict(ratio >= 25)}")
    for key in ("b", "f"):
        if key in by and "perl" in by[key]:
            ratio = by[key]["perl"]["wall"] / by[key]["new"]["wall"]
            print(f"  ({key}) deep stacks >= 25x the perl pipeline (issue 29): {ratio:.1f}x {verdict(ratio >= 25)}")
    if "c" in by:
        n = by["c"]["new"]
        print(f"  (c) ~200k samples <= 1 s, <= 150 MB: {by['c']['samples']:,} samples, {n['wall']:.2f} s, "
              f"{n['rss'] / 1e6:.0f} MB {verdict(n['wall'] <= 1 and n['rss'] <= 150e6)}")
    if "e" in by:
        n = by["e"]["new"]
        print(f"  (e) worst case, not a target: {by['e']['samples']:,} deep, all-distinct stacks, "
              f"{n['wall']:.2f} s, {n['rss'] / 1e6:.0f} MB")
    if "d" in by:
        n = by["d"]["new"]
        print(f"  (d) 1M samples <= 5 s, <= 500 MB: {n['wall']:.2f} s, {n['rss'] / 1e6:.0f} MB "
              f"{verdict(n['wall'] <= 5 and n['rss'] <= 500e6)}")
    if fold:
        ratio = fold["perl"]["wall"] / fold["new"]["wall"]
        print(f"  fold >= 10x stackcollapse-perf.pl: {ratio:.1f}x {verdict(ratio >= 10)}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--profcpu", required=True)
    p.add_argument("--old", help="the profcpu binary from before the speed work")
    p.add_argument("--flamegraph", required=True, help="a FlameGraph checkout")
    p.add_argument("--build", required=True, help="the build folder (fixtures, bench tools)")
    p.add_argument("--work", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--large-runs", type=int, default=3, help="runs of (d), the 1M-sample archive")
    p.add_argument("--perl-runs", type=int, default=int(os.environ.get("PERL_RUNS") or 0) or None,
                   help="runs of the perl pipeline, at most --runs (default: $PERL_RUNS, else --runs); "
                        "it is slow and its time does not change with profcpu's code")
    p.add_argument("--large-samples", type=int, default=1000000)
    p.add_argument("--fold-bytes", type=int, default=8 << 20)
    p.add_argument("--only", default=os.environ.get("ONLY") or "a,b,c,e,f,d,collect,fold",
                   help="what to measure, comma-separated (default: $ONLY, else all; SKIP_WORST=1 drops e)")
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--grow-recording", help="bench/grow_recording to use (default: the build folder's)")
    args = p.parse_args()
    args.perl_runs = min(args.perl_runs or args.runs, args.runs)
    args.demo_workload = os.path.join(args.build, "tests", "fixtures", "demo_workload")
    args.busy_stacks = os.path.join(args.build, "bench", "busy_stacks")
    args.deep_tree = os.path.join(args.build, "bench", "deep_tree")
    args.grow_recording = args.grow_recording or os.path.join(args.build, "bench", "grow_recording")
    only = {w.strip() for w in args.only.split(",") if w.strip()}
    unknown = only - {"a", "b", "c", "d", "e", "f", "collect", "fold"}
    if unknown:
        sys.exit(f"--only: unknown workloads {', '.join(sorted(unknown))} (a, b, c, d, e, f, collect, fold)")
    if os.environ.get("SKIP_WORST", "") not in ("", "0"):
        only.discard("e")
    # No symbol server in the timings: a set DEBUGINFOD_URLS would fetch
    # the unknown libraries' debug files over the network.
    env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
    runner = Runner(env, args.work)
    load_start = os.getloadavg()[0]
    work = args.work
    rows, collect, fold = [], {}, None
    perf_b = None

    # Recorded one after another, before anything is timed.
    plans = {"a": ("demo_workload 6 (2 threads, 6 s), 4999 Hz", [args.demo_workload, "6"]),
             "b": ("busy_stacks 12 2 (12 s of CPU, 2 threads), 4999 Hz", [args.busy_stacks, "12", "2"]),
             "c": ("demo_workload 20 (2 threads, 20 s), 4999 Hz", [args.demo_workload, "20"]),
             "e": ("worst case: busy_stacks 40 2 (40 s of CPU, 2 threads; deep, all-distinct stacks), 4999 Hz",
                   [args.busy_stacks, "40", "2"]),
             "f": ("deep_tree 12 2 (12 s of CPU, 2 threads; recursive, tens of thousands of distinct deep "
                   "stacks), 4999 Hz", [args.deep_tree, "12", "2"])}
    prepared = []
    perf_samples = {}
    for key, (label, argv) in plans.items():
        if key not in only and not (key == "b" and "fold" in only):
            continue
        log(f"recording {label}")
        run_dir = profcpu_record(runner, args.profcpu, os.path.join(work, f"{key}-record"), argv,
                                 ["-freq", "4999"])
        log(f"({key}) recorded {samples_of(run_dir):,} samples")
        archive = archive_only(run_dir, os.path.join(work, f"{key}-archive"))
        shutil.rmtree(os.path.join(work, f"{key}-record"))
        perf_data = None
        if key in ("a", "b", "c", "f"):
            perf_data, perf_samples[key] = perf_record(runner, os.path.join(work, f"{key}-perf"), argv)
            log(f"({key}) perf record: {perf_samples[key]:,} samples")
            if key == "b":
                perf_b = perf_data
        if key in only:
            prepared.append((key, label, archive, perf_data))
    if "d" in only:
        log("growing the 1M-sample recording (d)")
        prepared.append(("d", f"{args.large_samples:,} samples grown from busy_stacks 12 2 -callgraph fp "
                         "(bench/grow_recording: 16 CPUs, 999 Hz, 60 s, 17 copies' pids/tids)",
                         grown_archive(args, runner, work), None))

    for key, label, archive, perf_data in prepared:
        rows.append(measure_postprocess(args, runner, work, key, label, archive, perf_data))
        rows[-1]["perf_samples"] = perf_samples.get(key)
        os.unlink(archive)
    if "collect" in only:
        collect["profcpu"] = measure_collect(args, runner, work, args.profcpu, "new")
        if args.old:
            collect["old"] = measure_collect(args, runner, work, args.old, "old")
    if "fold" in only and perf_b:
        fold = measure_fold(args, runner, work, perf_b)
    print_report(args, rows, collect, fold, (load_start, os.getloadavg()[0]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "collect": collect, "fold": fold}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
