"""Symbol servers on loopback for test_symbol_servers.py: Debian's debuginfod
indexing a folder, an SSQP layout over python's http.server, and small
misbehaving servers (one that never answers, one that sends a 2 GB body).

Every server is a process of its own, listens on 127.0.0.1 only, is started
through a test (`test.addCleanup` stops it by pid, also when the test fails)
and dies with the test process (PR_SET_PDEATHSIG), so nothing outlives a
killed test run. Each writes what it was asked to a log file the tests read.

Run as a script, this module is the misbehaving servers themselves:
  symbol_servers.py silent PORT LOG          accepts, never reads or answers
  symbol_servers.py huge PORT LOG SIZE [--chunked] [--prefix FILE]
                                             answers every GET with SIZE bytes
                                             (FILE's bytes, then zeros), made
                                             as they are sent, never held
  symbol_servers.py netns                    in a fresh network namespace:
                                             brings lo up, says "ready", holds
                                             the namespace until stdin closes
  symbol_servers.py wait-http URL SECONDS    exits 0 once URL answers 200
"""

import ctypes
import http.server
import os
import select
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import time
import urllib.error
import urllib.request

LOOPBACK = "127.0.0.1"
START_TIMEOUT = 20.0  # seconds for a server to accept connections
INDEX_TIMEOUT = 60.0  # seconds for debuginfod to serve the indexed file

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """preexec_fn: SIGKILL this child when the test process dies (also
    across exec; nsenter and unshare -n exec without forking)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def python():
    """The interpreter running the tests: http.server and the servers below
    run on it, so a missing python3 cannot pass unnoticed."""
    if not sys.executable or not os.path.exists(sys.executable):
        raise AssertionError("python3 is required (scripts/setup.sh installs it)")
    return sys.executable


def require_tool(test, name, package):
    path = shutil.which(name)
    if path is None:
        test.fail(f"{name} is required: apt-get install {package} (scripts/setup.sh installs it)")
    return path


def free_port():
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def ssqp_key(build_id):
    """The SSQP key of an ELF debug file (dotnet/symstore's specification)."""
    return f"_.debug/elf-buildid-sym-{build_id.lower()}/_.debug"


def ssqp_layout(directory, build_id, debug_file):
    """Puts `debug_file` at DIRECTORY/<ssqp key>; returns DIRECTORY."""
    target = os.path.join(directory, ssqp_key(build_id))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy(debug_file, target)
    return directory


class Server:
    """A started server process: `url`, `log` (its log file), stop()."""

    def __init__(self, proc, url, log, what):
        self.proc = proc
        self.url = url
        self.log = log
        self.what = what

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def log_text(self):
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""


def _start(argv, log, env=None):
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=env, preexec_fn=_die_with_parent)
    return proc


def _wait_accepting(test, server, port):
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            test.fail(f"{server.what} exited with {server.proc.returncode}:\n{server.log_text()}")
        try:
            with socket.create_connection((LOOPBACK, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    test.fail(f"{server.what} did not accept connections on {LOOPBACK}:{port} "
              f"within {START_TIMEOUT:.0f} s:\n{server.log_text()}")


def _started(test, argv, port, log, what):
    proc = _start(argv, log)
    server = Server(proc, f"http://{LOOPBACK}:{port}", log, what)
    test.addCleanup(server.stop)
    _wait_accepting(test, server, port)
    return server


def start_http_server(test, directory, log):
    """python3 -m http.server serving DIRECTORY (an SSQP layout, or none:
    every key a 404). Its log holds one line per request."""
    port = free_port()
    argv = [python(), "-m", "http.server", "--bind", LOOPBACK, str(port),
            "--directory", directory]
    return _started(test, argv, port, log, f"http.server on {directory}")


def start_silent_server(test, log):
    """A server that accepts every connection and never answers."""
    port = free_port()
    return _started(test, [python(), os.path.abspath(__file__), "silent", str(port), log],
                    port, log, "the silent server")


def start_huge_server(test, log, size, chunked=False, prefix=None):
    """A server answering every GET with a SIZE-byte body (Content-Length,
    or chunked with no length), the bytes of PREFIX first if given."""
    port = free_port()
    argv = [python(), os.path.abspath(__file__), "huge", str(port), log, str(size)]
    if chunked:
        argv.append("--chunked")
    if prefix:
        argv += ["--prefix", prefix]
    return _started(test, argv, port, log, "the huge-body server")


class NetNamespace:
    """A network namespace of its own with only lo, up.

    debuginfod 0.188 (Debian bookworm) has no option to choose its address:
    libmicrohttpd listens on every IPv4 and IPv6 address of the machine. So
    it runs in a fresh network namespace, where 127.0.0.1 is the only
    address there is and nothing outside can reach it; profcpu runs in the
    same namespace (`argv(...)`) to talk to it. The namespace is held by
    one small process (`unshare -n python3 symbol_servers.py netns`);
    `nsenter --net=/proc/PID/ns/net` runs the others in it. No mount, no
    named netns, nothing left behind: it ends with its holder."""

    def __init__(self, test):
        require_tool(test, "unshare", "util-linux")
        require_tool(test, "nsenter", "util-linux")
        self.holder = subprocess.Popen(
            ["unshare", "-n", "--", python(), os.path.abspath(__file__), "netns"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=_die_with_parent)
        test.addCleanup(self.stop)
        ready, _, _ = select.select([self.holder.stdout], [], [], START_TIMEOUT)
        line = self.holder.stdout.readline() if ready else b""
        if line.strip() != b"ready":
            self.stop()
            test.fail(f"no network namespace (unshare -n): {line!r} "
                      f"{self.holder.stderr.read().decode(errors='replace')}")
        self.path = f"/proc/{self.holder.pid}/ns/net"

    def argv(self, *command):
        return ["nsenter", f"--net={self.path}", "--", *command]

    def stop(self):
        if self.holder.poll() is None:
            os.kill(self.holder.pid, signal.SIGKILL)
        self.holder.wait()
        for stream in (self.holder.stdin, self.holder.stdout, self.holder.stderr):
            stream.close()


DEBUGINFOD_PORT = 8002  # debuginfod's own default: the namespace is empty, every port is free


def start_debuginfod(test, netns, directory, workdir, build_id):
    """Debian's debuginfod in `netns`, scanning DIRECTORY's ELF/DWARF files
    (-F), once (-t 0: no rescans; -g 0: no grooming), with its database in
    WORKDIR; returns once it serves BUILD_ID's debuginfo (it indexes in the
    background after it starts listening)."""
    debuginfod = require_tool(test, "debuginfod", "debuginfod")
    log = os.path.join(workdir, "debuginfod.log")
    env = dict(os.environ)
    env.pop("DEBUGINFOD_URLS", None)  # never federate to upstream servers
    env["TMPDIR"] = workdir           # its fdcache
    argv = netns.argv(debuginfod, "-F", "-p", str(DEBUGINFOD_PORT),
                      "-d", os.path.join(workdir, "debuginfod.sqlite"),
                      "-t", "0", "-g", "0", "-c", "1", "-v", directory)
    proc = _start(argv, log, env=env)
    server = Server(proc, f"http://{LOOPBACK}:{DEBUGINFOD_PORT}", log, "debuginfod")
    test.addCleanup(server.stop)
    url = f"{server.url}/buildid/{build_id}/debuginfo"
    try:
        waited = subprocess.run(netns.argv(python(), os.path.abspath(__file__), "wait-http",
                                           url, str(INDEX_TIMEOUT)),
                                capture_output=True, text=True, timeout=INDEX_TIMEOUT + 10)
        ok = waited.returncode == 0
        why = waited.stdout + waited.stderr
    except subprocess.TimeoutExpired:
        ok, why = False, "wait-http hung"
    if not ok:
        test.fail(f"debuginfod did not serve {url} within {INDEX_TIMEOUT:.0f} s "
                  f"({why.strip()}):\n{server.log_text()}")
    return server


# --- the servers themselves (run as a script) ---------------------------------

def _log_line(log, text):
    with open(log, "a", encoding="utf-8") as f:
        f.write(text + "\n")


def _serve_silent(port, log):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((LOOPBACK, port))
    listener.listen(64)
    held = []  # never read, never answered, never closed
    while True:
        conn, peer = listener.accept()
        held.append(conn)
        _log_line(log, f"accepted {peer[0]}:{peer[1]}")


def _serve_huge(port, log, size, chunked, prefix_path):
    prefix = b""
    if prefix_path:
        with open(prefix_path, "rb") as f:
            prefix = f.read()
    zeros = bytes(64 * 1024)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(size))
            self.send_header("Connection", "close")
            self.end_headers()
            sent = 0
            try:
                while sent < size:
                    block = prefix[sent:sent + len(zeros)] if sent < len(prefix) else zeros
                    block = block[:size - sent]
                    if chunked:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
                    else:
                        self.wfile.write(block)
                    sent += len(block)
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
                outcome = "complete"
            except OSError as e:  # the client hung up: what it should do
                outcome = f"client closed ({e.__class__.__name__})"
            self.close_connection = True
            _log_line(log, f"GET {self.path} sent {sent} bytes, {outcome}")

        def log_message(self, *args):
            pass

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    Server((LOOPBACK, port), Handler).serve_forever()


def _hold_netns():
    # Runs in the namespace unshare -n made: lo exists but is down.
    import fcntl
    import struct
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sh", fcntl.ioctl(s, siocgifflags, struct.pack("16sh", b"lo", 0)))[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes the pipe or dies


def _wait_http(url, seconds):
    deadline = time.monotonic() + seconds
    last = ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return 0
                last = str(response.status)
        except urllib.error.HTTPError as e:
            last = str(e.code)
        except OSError as e:
            last = str(e)
        time.sleep(0.2)
    print(f"last answer: {last}")
    return 1


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "silent":
        _serve_silent(int(argv[2]), argv[3])
    elif command == "huge":
        rest = argv[5:]
        prefix = rest[rest.index("--prefix") + 1] if "--prefix" in rest else None
        _serve_huge(int(argv[2]), argv[3], int(argv[4]), "--chunked" in rest, prefix)
    elif command == "netns":
        _hold_netns()
    elif command == "wait-http":
        return _wait_http(argv[2], float(argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
