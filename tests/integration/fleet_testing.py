"""Helpers for the fleet tests: an agent process, its log lines and totals,
and HTTP stand-ins for a store that misbehaves (slow, garbage, huge), each
bound to 127.0.0.1 and stopped by the test that starts it."""

import http.server
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import profcpu_testing as t

TOTALS = re.compile(
    r"stopped: (\d+) windows, (\d+) samples taken; (\d+) windows \((\d+) samples\) stored, "
    r"(\d+) already stored on retry; (\d+) windows \((\d+) samples\) lost; "
    r"(\d+) windows wait in the spool")
WINDOW = re.compile(r"window (\d+): (\d+) samples")


class Agent:
    """`profcpu agent` with these flags; its stderr goes to a file the test reads."""

    def __init__(self, tmpdir, store, extra=(), name="agent"):
        self.log_path = os.path.join(tmpdir, f"{name}.log")
        self.spool = os.path.join(tmpdir, f"{name}-spool")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [t.PROFCPU, "agent", "-store", store, "-spool", self.spool,
             "-work", os.path.join(tmpdir, f"{name}-work"), *extra],
            stdout=subprocess.DEVNULL, stderr=self._log)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def wait_for_log(self, pattern, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.log())
            if match:
                return match
            if self.proc.poll() is not None:
                raise AssertionError(f"the agent exited ({self.proc.returncode}):\n{self.log()}")
            time.sleep(0.2)
        raise AssertionError(f"no '{pattern}' in the agent's log within {timeout} s:\n{self.log()}")

    def windows_logged(self):
        return [(int(w), int(n)) for w, n in WINDOW.findall(self.log())]

    def max_rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def stop(self, timeout=120):
        """SIGTERM, then the totals of its last line (a dict)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the agent did not stop on SIGTERM:\n{self.log()}")
        finally:
            self._log.close()
        match = TOTALS.search(self.log())
        if not match:
            raise AssertionError(f"the agent printed no totals:\n{self.log()}")
        keys = ["windows", "samples", "windows_sent", "samples_sent", "found_stored",
                "windows_lost", "samples_lost", "waiting"]
        return dict(zip(keys, map(int, match.groups())))

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeStore:
    """An HTTP server on 127.0.0.1 that answers every request with `handler`
    (a function of the request handler): the store gone wrong."""

    def __init__(self, handler):
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.body = self.rfile.read(length) if length else b""
                outer.requests += 1
                handler(self)

            do_GET = do_POST

            def log_message(self, *args):
                pass

        self.requests = 0
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class SlowAfterInsertProxy:
    """Forwards every request to `target` (a real shard) but, for the first
    `delays` INSERTs into samples_local, answers only after `delay` seconds:
    the store took the window, the agent's send timed out."""

    def __init__(self, target, delay, delays):
        self.delayed = 0

        def handle(request):
            url = target + request.path
            forwarded = urllib.request.Request(url, data=request.body, method="POST",
                                               headers={k: v for k, v in request.headers.items()
                                                        if k.lower() in ("content-encoding",)})
            try:
                with urllib.request.urlopen(forwarded, timeout=60) as answer:
                    status, body = answer.status, answer.read()
            except urllib.error.HTTPError as e:
                status, body = e.code, e.read()
            except OSError as e:
                status, body = 502, str(e).encode()
            sql = urllib.parse.unquote(request.path)
            if "INSERT INTO profcpu.samples_local" in sql and self.delayed < delays:
                self.delayed += 1
                time.sleep(delay)
            try:
                request.send_response(status)
                request.send_header("Content-Length", str(len(body)))
                request.end_headers()
                request.wfile.write(body)
            except OSError:
                pass  # the agent gave up waiting

        self.store = FakeStore(handle)
        self.url = self.store.url

    def stop(self):
        self.store.stop()
