#!/usr/bin/env python3
"""profile.html against flamegraph.svg and speedscope, in headless Chromium.

For each size (10k, 200k and 1M samples by default) writes synthetic
`perf script` text shaped like `perf record -a -g` on a 16-CPU machine
(a dozen processes, ~100 threads, thousands of distinct stacks 10-60 frames
deep over a few thousand function names, kernel and idle frames, samples
spread over 60 s), then measures:
  profile.html  `profcpu html` on the text: the file's size, bytes per
                sample, the time to write it, and the page's load time in
                headless Chromium, navigation start to data-state ready and
                the next frame (median of RUNS, each in a fresh browser
                context);
  flamegraph    `profcpu fold TEXT | profcpu flamegraph`: the SVG's size
                and load time (navigation to the load event, and first paint);
  speedscope    its release page (npm package, served from 127.0.0.1) with
                #profileURL= the same text: navigation until its flame graph
                is drawn (its title names the profile, plus two frames), or
                why it failed.
Prints one table, the figures side by side, and the issue's targets
(200k < 2 s, 1M < 5 s, <= 16 B/sample)."""

import argparse
import bisect
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = os.path.join(ROOT, "tests", "browser", "page_driver.js")
SPEEDSCOPE_VERSION = "1.25.0"

CPUS = 16
SPAN_S = 60.0
PERIOD = 10101010  # cpu-clock at 99 Hz


# --- synthetic perf script ------------------------------------------------

WORDS = ("parse encode decode hash lookup insert erase flush write read poll wait lock unlock "
         "alloc free copy move scan match render layout compile link load store send recv "
         "compress inflate serialize visit apply reduce merge split sort filter index query "
         "commit rollback schedule dispatch resolve validate update notify").split()
NAMESPACES = ("db", "net", "http", "json", "rpc", "storage", "cache", "sched", "io", "util",
              "proto", "tls", "regex", "sql", "log", "metrics")
CLASSES = ("Engine", "Table", "Reader", "Writer", "Buffer", "Session", "Handler", "Pool",
           "Parser", "Codec", "Tree", "Index", "Worker", "Queue", "Channel", "Context")


class Synth:
    """A random but fixed (seeded) machine: processes, threads, a call tree
    per process, and a Zipf-like popularity over the distinct stacks."""

    def __init__(self, seed=15, functions=3000, stacks=6000):
        rng = random.Random(seed)
        self.rng = rng
        names = set()
        while len(names) < functions:
            ns, cls = rng.choice(NAMESPACES), rng.choice(CLASSES)
            w = "_".join(rng.sample(WORDS, rng.randint(1, 3)))
            style = rng.random()
            if style < 0.6:
                names.add(f"{ns}::{cls}::{w}")
            elif style < 0.8:
                names.add(f"{ns}::{cls}<{rng.choice(CLASSES)}>::{w}")
            else:
                names.add(f"{ns}_{w}_{rng.randint(0, 999)}")
        self.functions = sorted(names)
        self.kernel = [f"{p}_{w}" for p in ("do", "__x64_sys", "__handle", "tcp", "ext4", "vfs", "page")
                       for w in WORDS[:24]]
        self.libs = ["/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                     "/usr/lib/x86_64-linux-gnu/libssl.so.3", "/usr/lib/x86_64-linux-gnu/libz.so.1"]
        comms = ["postgres", "nginx", "java", "node", "redis-server", "envoy", "python3", "mysqld",
                 "kafka", "rustc", "clickhouse", "dockerd"]
        self.processes = []
        pid = 1200
        for comm in comms:
            pid += rng.randint(10, 900)
            threads = [pid] + [pid + 1 + i for i in range(rng.randint(2, 16))]
            binary = f"/usr/bin/{comm}"
            pool = rng.sample(self.functions, 400)
            self.processes.append({"comm": comm, "pid": pid, "threads": threads, "binary": binary,
                                   "pool": pool, "base": rng.randrange(0x550000000000, 0x560000000000, 4096)})
            pid = threads[-1]
        self.addresses = {}
        self.children = {}
        texts = []
        weights = []
        owners = []
        for i in range(stacks):
            p = rng.randrange(len(self.processes))
            texts.append(self._stack_text(self.processes[p], rng))
            owners.append(p)
            weights.append(1.0 / (i + 1) ** 0.9)
        # Idle CPUs: swapper's cpuidle stacks, as perf -a records them.
        idle = ["intel_idle", "cpuidle_enter_state", "cpuidle_enter", "do_idle", "cpu_startup_entry",
                "start_secondary", "secondary_startup_64_no_verify"]
        self.idle_text = "".join(self._frame(f, "[kernel.kallsyms]", True) for f in idle).encode()
        self.stack_texts = [t.encode() for t in texts]
        self.owners = owners
        cumulative = []
        acc = 0.0
        for w in weights:
            acc += w
            cumulative.append(acc)
        self.cumulative = cumulative

    def _frame(self, name, dso, kernel=False):
        key = (name, dso)
        if key not in self.addresses:
            base = 0xffffffff81000000 if kernel else 0x7f0000000000
            self.addresses[key] = base + self.rng.randrange(0, 1 << 24) * 16
        off = self.rng.randrange(1, 0x400)
        return f"\t{self.addresses[key] + off:16x} {name}+0x{off:x} ({dso})\n"

    def _child(self, proc, path_key, rng):
        """The callees of a call path: a few fixed ones, so paths repeat as
        in a real program's call tree."""
        if path_key not in self.children:
            self.children[path_key] = [rng.choice(proc["pool"]) for _ in range(rng.randint(1, 4))]
        return rng.choice(self.children[path_key])

    def _stack_text(self, proc, rng):
        depth = rng.randint(10, 52)
        if rng.random() < 0.3:
            frames = [("_start", proc["binary"]), ("__libc_start_main", self.libs[0]), ("main", proc["binary"])]
        else:
            frames = [("clone3", self.libs[0]), ("start_thread", self.libs[0]),
                      (f"{proc['comm']}_worker_main", proc["binary"])]
        key = (proc["comm"], frames[-1][0])
        while len(frames) < depth:
            name = self._child(proc, key, rng)
            dso = proc["binary"] if rng.random() < 0.85 else rng.choice(self.libs[1:])
            frames.append((name, dso))
            key = (key, name)
        text = [self._frame(n, d) for n, d in frames]
        if rng.random() < 0.05:
            text[-1] = f"\t{rng.randrange(1 << 40):16x} [unknown] ([unknown])\n"
        if rng.random() < 0.2:  # a system call's kernel path on top (at most 60 frames in all)
            kernel = ["entry_SYSCALL_64_after_hwframe", "do_syscall_64"] + rng.sample(self.kernel, rng.randint(1, 6))
            text += [self._frame(k, "[kernel.kallsyms]", True) for k in kernel]
        text.reverse()  # perf script: leaf first
        return "".join(text)

    def write(self, path, samples, seed=1):
        rng = random.Random(seed)
        t0 = 81234.0
        times = sorted(rng.uniform(0, SPAN_S) for _ in range(samples))
        total = self.cumulative[-1]
        with open(path, "wb", buffering=1 << 22) as f:
            chunk = []
            for t in times:
                cpu = rng.randrange(CPUS)
                stamp = t0 + t
                if rng.random() < 0.1:
                    head = "swapper     0/0     [%03d] %.6f: %10d cpu-clock: \n" % (cpu, stamp, PERIOD)
                    body = self.idle_text
                else:
                    i = bisect.bisect_left(self.cumulative, rng.random() * total)
                    i = min(i, len(self.stack_texts) - 1)
                    proc = self.processes[self.owners[i]]
                    tid = proc["threads"][rng.randrange(len(proc["threads"]))]
                    head = "%s %7d/%-7d [%03d] %.6f: %10d cpu-clock: \n" % (
                        proc["comm"], proc["pid"], tid, cpu, stamp, PERIOD)
                    body = self.stack_texts[i]
                chunk.append(head.encode())
                chunk.append(body)
                chunk.append(b"\n")
                if len(chunk) > 30000:
                    f.write(b"".join(chunk))
                    chunk = []
            f.write(b"".join(chunk))
        return os.path.getsize(path)


# --- measuring ------------------------------------------------------------

def data_element_bytes(page):
    """The size of the profile's data in the page (the profcpu-data
    element's base64 text); the rest is the page's code and META."""
    with open(page, "rb") as f:
        html = f.read()
    start = html.find(b'id="profcpu-data"')
    if start < 0:
        return None
    start = html.index(b">", start) + 1
    return html.index(b"</script>", start) - start


def run(argv, **kwargs):
    return subprocess.run(argv, check=True, **kwargs)


def drive(node, spec, timeout):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
    try:
        proc = subprocess.run([node, DRIVER, f.name], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"failure": f"driver timed out after {timeout} s", "median": {}}
    finally:
        os.unlink(f.name)
    if proc.returncode != 0:
        return {"failure": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                f"driver exit {proc.returncode}", "median": {}}
    return json.loads(proc.stdout)


def install_speedscope(cache):
    root = os.path.join(cache, f"speedscope-{SPEEDSCOPE_VERSION}")
    release = os.path.join(root, "node_modules", "speedscope", "dist", "release")
    if not os.path.exists(os.path.join(release, "index.html")):
        os.makedirs(root, exist_ok=True)
        print(f"bench: installing speedscope {SPEEDSCOPE_VERSION} into {root}", file=sys.stderr)
        run(["npm", "install", "--prefix", root, "--no-audit", "--no-fund", "--loglevel=error",
             f"speedscope@{SPEEDSCOPE_VERSION}"], stdout=subprocess.DEVNULL)
    return release


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """python3 -m http.server on 127.0.0.1 for a folder; stopped by pid."""

    def __init__(self, folder):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-m", "http.server", str(self.port),
                                      "--bind", "127.0.0.1", "--directory", folder],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("http.server did not start")

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, 15)
        self.proc.wait()


def fmt_ms(ms):
    return "-" if ms is None else f"{ms / 1000:.2f}"


def mb(n):
    return f"{n / 1e6:.1f}"


def measure_size(args, synth, samples, work, release):
    r = {"samples": samples}
    text = os.path.join(work, f"perf-{samples}.txt")
    r["text_bytes"] = synth.write(text, samples)
    print(f"bench: {samples} samples: perf script text {mb(r['text_bytes'])} MB", file=sys.stderr)

    page = os.path.join(work, f"profile-{samples}.html")
    t0 = time.monotonic()
    run([args.profcpu, "html", "-o", page, text], stdout=subprocess.DEVNULL)
    r["html_write_s"] = time.monotonic() - t0
    r["html_bytes"] = os.path.getsize(page)
    r["data_bytes"] = data_element_bytes(page)
    out = drive(args.node, {"mode": "bench", "path": page, "runs": args.runs, "until": "ready",
                            "timeout_ms": args.timeout * 1000}, args.timeout * args.runs + 120)
    r["html_load_ms"] = out["median"].get("ms")
    r["html_table_ms"] = out["median"].get("table_row_ms")
    r["html_failure"] = out.get("failure")

    svg = os.path.join(work, f"graph-{samples}.svg")
    t0 = time.monotonic()
    with open(svg, "wb") as f:
        run(["sh", "-c", '"$1" fold "$2" | "$1" flamegraph', "sh", args.profcpu, text], stdout=f)
    r["svg_write_s"] = time.monotonic() - t0
    r["svg_bytes"] = os.path.getsize(svg)
    out = drive(args.node, {"mode": "bench", "path": svg, "runs": args.runs, "until": "load",
                            "timeout_ms": args.timeout * 1000}, args.timeout * args.runs + 120)
    r["svg_load_ms"] = out["median"].get("ms")
    r["svg_paint_ms"] = out["median"].get("first_paint_ms")
    r["svg_failure"] = out.get("failure")

    r["speedscope_ms"], r["speedscope_failure"] = None, "not run"
    if release:
        serve = os.path.join(work, "serve")
        shutil.rmtree(serve, ignore_errors=True)
        shutil.copytree(release, serve)
        os.link(text, os.path.join(serve, "perf.txt"))
        server = Server(serve)
        try:
            url = f"http://127.0.0.1:{server.port}/index.html#profileURL=/perf.txt"
            times = []
            failure = None
            for _ in range(args.runs):
                out = drive(args.node, {"mode": "bench", "url": url, "runs": 1, "until": "speedscope",
                                        "timeout_ms": args.speedscope_timeout * 1000},
                            args.speedscope_timeout + 120)
                if out.get("failure"):
                    failure = out["failure"]
                    break
                times.append(out["median"]["ms"])
                if out["median"]["ms"] > 60000:
                    break  # one slow run is figure enough
            r["speedscope_ms"] = statistics.median(times) if times and not failure else None
            r["speedscope_runs"] = len(times)
            r["speedscope_failure"] = failure
        finally:
            server.stop()
            shutil.rmtree(serve, ignore_errors=True)
    for name in (text, svg):
        os.unlink(name)
    os.unlink(page)
    return r


def print_table(results, runs):
    head = ("samples", "text MB", "html MB", "html B/sample", "data B/sample", "html write s",
            "html ready s", "html table s", "svg MB", "svg write s", "svg load s", "svg paint s", "speedscope s")
    rows = []
    notes = []

    def failed(reason):
        notes.append(reason)
        return f"failed [{len(notes)}]"

    for r in results:
        ready = fmt_ms(r["html_load_ms"]) if not r["html_failure"] else failed(r["html_failure"])
        svg = fmt_ms(r["svg_load_ms"]) if not r["svg_failure"] else failed(r["svg_failure"])
        if r["speedscope_failure"]:
            ss = failed(r["speedscope_failure"])
        else:
            ss = fmt_ms(r["speedscope_ms"]) + ("" if r.get("speedscope_runs", runs) == runs
                                              else " (1 run)")
        rows.append((f"{r['samples']:,}", mb(r["text_bytes"]), mb(r["html_bytes"]),
                     f"{r['html_bytes'] / r['samples']:.1f}",
                     "-" if r["data_bytes"] is None else f"{r['data_bytes'] / r['samples']:.1f}",
                     f"{r['html_write_s']:.1f}", ready,
                     fmt_ms(r["html_table_ms"]), mb(r["svg_bytes"]), f"{r['svg_write_s']:.1f}", svg,
                     fmt_ms(r["svg_paint_ms"]), ss))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    print(f"headless Chromium, median of {runs} loads, seconds from navigation start to:\n"
          f"  profile.html: data-state ready, then a frame (table: its first row in #top-functions); data B/sample:\n"
          f"    the profile's data alone (base64); write s: profcpu html\n"
          f"  flamegraph.svg: the load event (paint: first paint); write s: profcpu fold | profcpu flamegraph\n"
          f"  speedscope {SPEEDSCOPE_VERSION}: its flame graph drawn")
    print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
    for i, note in enumerate(notes, 1):
        print(f"[{i}] {note}")
    targets = {200000: 2000, 1000000: 5000}
    for r in results:
        notes = []
        if r["samples"] in targets:
            ok = r["html_load_ms"] is not None and r["html_load_ms"] < targets[r["samples"]]
            notes.append(f"load < {targets[r['samples']] / 1000:.0f} s: {'ok' if ok else 'MISSED'}")
        per = r["html_bytes"] / r["samples"]
        fixed = r["html_bytes"] - (r["data_bytes"] or 0)
        notes.append(f"<= 16 B/sample: {'ok' if per <= 16 else 'MISSED'} ({per:.1f} B/sample in all; "
                     f"the page's code and META are {fixed / 1000:.0f} kB of it)")
        print(f"target {r['samples']:,}: " + ", ".join(notes))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--profcpu", required=True)
    p.add_argument("--sizes", default="10000,200000,1000000")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=int, default=120, help="seconds per page load")
    p.add_argument("--speedscope-timeout", type=int, default=300)
    p.add_argument("--no-speedscope", action="store_true")
    p.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "profcpu-bench"))
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args()
    args.node = shutil.which("node") or shutil.which("nodejs")
    if not args.node:
        sys.exit("node is required (bash scripts/setup.sh installs it)")
    release = None if args.no_speedscope else install_speedscope(args.cache)
    synth = Synth()
    work = tempfile.mkdtemp(prefix="profcpu-page-bench-")
    results = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            results.append(measure_size(args, synth, size, work, release))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print_table(results, args.runs)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
