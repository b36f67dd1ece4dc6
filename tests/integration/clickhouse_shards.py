"""Real ClickHouse servers on loopback as the shards of the fleet store, for
the fleet tests: a thin wrapper over scripts/clickhouse-shards.sh (the same
script docs/fleet.md and bench/fleet.sh use), so the tests run the store a
user runs.

    shards = ClickHouseShards(tmpdir, n=2)
    shards.start()                       # configs in tmpdir, N servers, SELECT 1
    test.addCleanup(shards.stop)         # stops every server by its pid
    shards.urls                          # ["http://127.0.0.1:PORT", ...]
    shards.store_flag                    # "URL,URL" for -store
    shards.query(0, "SELECT count() FROM profcpu.samples")
    shards.stop_shard(1); shards.start_shard(1)   # same port, same data

Fails loudly (RuntimeError naming the package) when clickhouse-server is
missing: a fleet test that skips would hide the store it exists to check.
"""

import atexit
import os
import shutil
import subprocess
import urllib.error
import urllib.request

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(_ROOT, "scripts", "clickhouse-shards.sh")
QUERY_TIMEOUT = 60.0  # seconds for one query of a test


def clickhouse_server():
    """The server binary the script will run, or a RuntimeError that says
    how to install it."""
    path = os.environ.get("CLICKHOUSE_SERVER") or shutil.which("clickhouse-server")
    if not path and os.access("/usr/sbin/clickhouse-server", os.X_OK):
        path = "/usr/sbin/clickhouse-server"
    if not path:
        raise RuntimeError("clickhouse-server is required for the fleet tests: "
                           "apt-get install clickhouse-server (scripts/setup.sh installs it)")
    return path


class ClickHouseShards:
    def __init__(self, tmpdir, n=2):
        self.dir = os.path.join(tmpdir, "clickhouse")
        self.n = n
        self.urls = []

    def _run(self, *args):
        clickhouse_server()
        result = subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True,
                                timeout=180)
        if result.returncode != 0:
            raise RuntimeError(f"clickhouse-shards.sh {' '.join(args)} failed "
                               f"({result.returncode}): {result.stderr.strip()}")
        return result.stdout

    def start(self):
        """Starts every shard; on failure stops those that did start. The
        servers are stopped at exit too, should the caller's cleanup not run
        (they are processes of their own: setsid, not the test's children)."""
        atexit.register(self.stop)
        try:
            self._run("start", self.dir, str(self.n))
        except Exception:
            self.stop()
            raise
        with open(os.path.join(self.dir, "urls")) as f:
            self.urls = f.read().strip().split(",")
        return self

    def stop(self):
        """Stops every shard by its pid (again: nothing to do)."""
        if any(self.pid(i) for i in range(self.n)):
            self._run("stop", self.dir)

    def stop_shard(self, i):
        self._run("stop-shard", self.dir, str(i))

    def start_shard(self, i):
        self._run("start-shard", self.dir, str(i))

    def pid(self, i):
        """The running server's pid of shard i, or None."""
        try:
            with open(os.path.join(self.dir, f"shard{i}", "pid")) as f:
                return int(f.read())
        except (FileNotFoundError, ValueError):
            return None

    @property
    def store_flag(self):
        return ",".join(self.urls)

    def query(self, i, sql, data=None):
        """Runs `sql` on shard i over HTTP (POST); returns the answer's text.
        An error answer raises RuntimeError with ClickHouse's message."""
        body = sql.encode() if data is None else data
        url = self.urls[i] + "/"
        if data is not None:
            url += "?query=" + urllib.request.quote(sql)
        request = urllib.request.Request(url, data=body, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=QUERY_TIMEOUT) as answer:
                return answer.read().decode()
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"shard {i}: HTTP {e.code}: {e.read().decode(errors='replace').strip()}")
