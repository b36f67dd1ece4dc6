"""The fleet store against real ClickHouse servers: two shards on loopback
started by scripts/clickhouse-shards.sh (clickhouse_shards.py), stopped by
pid. `profcpu fleet init` creates every table on both shards (twice is
fine) and the Distributed tables answer; rows the store client writes
(RowBinary, gzip'd; fleet_store_probe drives it) read back through them;
`profcpu fleet retention` drops old days and keeps the roll-up; and a store
address that refuses, answers garbage, never answers, or sends 2 GB gives a
one-line error while the client's memory stays bounded.
"""

import http.server
import os
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import clickhouse_shards
from profcpu_testing import PROFCPU

PROBE = os.environ.get("PROFCPU_FLEET_STORE_PROBE", "")
TABLES = ["frames", "frames_local", "losses", "losses_local", "samples", "samples_hourly",
          "samples_hourly_local", "samples_hourly_mv", "samples_local", "stacks", "stacks_local"]
RUN_TIMEOUT = 120  # seconds: a hang fails the test instead of holding the suite
DAY = 86400
# The client's default answer cap is 64 MB: a 2 GB answer must leave it under
# this: the cap and ~25 MB of code and libraries (measured: 78 MB streamed,
# 24 MB announced; a buffer grown by doubling reached 141).
RSS_BOUND_MB = 110


def run(*args, stdin=None):
    return subprocess.run(list(args), input=stdin, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)


def run_measured(*args):
    """Runs a command; returns (returncode, stdout, stderr, peak RSS in MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(list(args), stdout=out, stderr=err)
        deadline = time.monotonic() + RUN_TIMEOUT
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"{args} did not finish in {RUN_TIMEOUT}s")
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (process.returncode, out.read().decode(), err.read().decode(),
                usage.ru_maxrss / 1024)


def tsv_escape(value):
    return (str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n"))


def tsv(rows):
    return "".join("\t".join(tsv_escape(v) for v in row) + "\n" for row in rows)


def sample(t, node, stack_id, count, window, comm="app", container="c1", pod="", namespace=""):
    # time, node container cgroup pod_uid pod namespace comm exe runtime build_id, stack, count, window
    return [int(t), node, container, "/sys/fs/cgroup/x", "", pod, namespace, comm, "/usr/bin/app",
            "", "ab12", stack_id, count, window]


class Misbehaving(http.server.BaseHTTPRequestHandler):
    """A store address that answers every POST as self.server.mode says."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        mode = self.server.mode
        if mode == "garbage":
            self.wfile.write(b"\x00\x01 SSH-2.0-OpenSSH_9.2 not http at all\r\n\r\n" * 50)
        elif mode == "silent":
            # Holds the connection without a byte until the client gives up.
            self.connection.settimeout(RUN_TIMEOUT)
            try:
                while self.connection.recv(4096):
                    pass
            except OSError:
                pass
        elif mode in ("announced", "streamed", "error-page"):
            status = 500 if mode == "error-page" else 200
            self.send_response(status)
            if mode == "streamed":
                self.send_header("Connection", "close")  # a body until the connection ends
            else:
                self.send_header("Content-Length", str(2 << 30))
            self.end_headers()
            if mode == "error-page":
                self.wfile.write(b"Code: 241, e.displayText() = DB::Exception: Memory limit "
                                 b"(total) exceeded\n")
            chunk = b"1\t2\n" * 16384
            try:
                for _ in range((2 << 30) // len(chunk)):
                    self.wfile.write(chunk)
                    self.server.sent += len(chunk)
            except OSError:
                pass
            self.close_connection = True


class MisbehavingServer:
    def __init__(self, mode):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Misbehaving)
        self.httpd.daemon_threads = True
        self.httpd.mode = mode
        self.httpd.sent = 0
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def sent(self):
        return self.httpd.sent

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FleetStoreTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not PROBE or not os.path.exists(PROBE):
            raise RuntimeError("PROFCPU_FLEET_STORE_PROBE must name the built fleet_store_probe "
                               "(run through ctest)")
        cls.tmp = tempfile.TemporaryDirectory(prefix="profcpu-fleet-")
        cls.shards = clickhouse_shards.ClickHouseShards(cls.tmp.name, n=2)
        try:
            cls.shards.start()
        except Exception:
            cls.shards.stop()
            cls.tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.shards.stop()
        finally:
            cls.tmp.cleanup()

    def init(self):
        result = run(PROFCPU, "fleet", "init", "-store", self.shards.store_flag)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result

    def insert(self, shard, table, rows):
        result = run(PROBE, "insert", self.shards.urls[shard], table, stdin=tsv(rows))
        self.assertEqual(result.returncode, 0, result.stderr)

    def count(self, shard, sql):
        return int(self.shards.query(shard, sql).strip())

    def test_init_creates_every_table_on_both_shards_and_again_changes_nothing(self):
        first = self.init()
        self.assertIn("store ready on 2 shards (cluster profcpu)", first.stdout)
        listing = "SELECT name FROM system.tables WHERE database = 'profcpu' ORDER BY name"
        for shard in (0, 1):
            self.assertEqual(self.shards.query(shard, listing).split(), TABLES)
        self.init()  # CREATE ... IF NOT EXISTS: no error, nothing new
        for shard in (0, 1):
            self.assertEqual(self.shards.query(shard, listing).split(), TABLES)
            for table in ("samples", "stacks", "frames", "losses", "samples_hourly"):
                # The Distributed tables answer on either shard (over both).
                self.count(shard, f"SELECT count() FROM profcpu.{table}")

    def test_init_says_when_the_store_does_not_fit(self):
        result = run(PROFCPU, "fleet", "init", "-store", self.shards.urls[0])
        self.assertEqual(result.returncode, 1)
        self.assertIn("cluster 'profcpu' has 2 shards in its remote_servers, -store lists 1",
                      result.stderr)
        result = run(PROFCPU, "fleet", "init", "-store", self.shards.store_flag, "-cluster", "other")
        self.assertEqual(result.returncode, 1)
        self.assertIn("has no cluster 'other' in its remote_servers", result.stderr)
        result = run(PROFCPU, "fleet", "init", "-store", "127.0.0.1:8123")
        self.assertEqual(result.returncode, 2)
        self.assertIn("expected http://HOST:PORT", result.stderr)

    def test_rows_written_by_the_client_read_back_through_the_distributed_tables(self):
        self.init()
        now = int(time.time())
        # Each node's rows on its own shard, as the agent sends them; a name
        # with a tab, a newline, a backslash and UTF-8 must come back intact.
        odd_name = "Ns.Type`1[T]::Method\t(x)\\n\n→"
        self.insert(0, "frames", [[101, "main", "app", "ab12"], [102, odd_name, "lib.so", ""]])
        self.insert(0, "stacks", [[9001, "101,102"]])
        self.insert(0, "samples", [sample(now, "node-a", 9001, 3, 1),
                                   sample(now + 1, "node-a", 9001, 4, 1)])
        self.insert(1, "frames", [[101, "main", "app", "ab12"]])
        self.insert(1, "stacks", [[9002, "101"], [9003, ""]])
        self.insert(1, "samples", [sample(now, "node-b", 9002, 5, 7, comm="web"),
                                   sample(now, "node-b", 9003, 1, 7, comm="web")])
        window = f"time >= {now - 10} AND time <= {now + 10}"
        by_node = self.shards.query(
            1, f"SELECT node, sum(count) FROM profcpu.samples WHERE {window} AND "
               f"node IN ('node-a', 'node-b') GROUP BY node ORDER BY node")
        self.assertEqual(by_node, "node-a\t7\nnode-b\t6\n")
        # Each shard holds the names its samples need: aggregate and join there.
        joined = self.shards.query(
            0, "SELECT s.stack_id, st.frame_ids FROM (SELECT stack_id, sum(count) AS n FROM "
               f"profcpu.samples_local WHERE {window} AND node = 'node-a' GROUP BY stack_id) AS s "
               "ANY INNER JOIN (SELECT id AS stack_id, frame_ids FROM profcpu.stacks_local) AS st "
               "USING stack_id")
        self.assertEqual(joined, "9001\t[101,102]\n")
        self.assertEqual(self.shards.query(1, "SELECT frame_ids FROM profcpu.stacks_local "
                                              "WHERE id = 9003"), "[]\n")
        name = run(PROBE, "query", self.shards.urls[0],
                   "SELECT name FROM profcpu.frames_local WHERE id = 102 FORMAT RawBLOB")
        if name.returncode != 0:  # 18.16 has no RawBLOB: TSV, escaped
            name = run(PROBE, "query", self.shards.urls[0],
                       "SELECT name FROM profcpu.frames_local WHERE id = 102 FORMAT TSVRaw")
        self.assertEqual(name.returncode, 0, name.stderr)
        self.assertEqual(name.stdout, odd_name + "\n")
        # The roll-up was fed by the materialized view, on each shard.
        hourly = self.count(0, "SELECT sum(count) FROM profcpu.samples_hourly WHERE "
                               "node IN ('node-a', 'node-b') AND "
                               f"hour >= toStartOfHour(toDateTime({now - 10}))")
        self.assertEqual(hourly, 13)

    def test_retention_drops_old_days_and_keeps_the_rollup(self):
        self.init()
        now = int(time.time())
        rows = [sample(now - 30 * DAY, "node-r", 1, 10, 100),   # past -keep, within -keep-rollup
                sample(now - 200 * DAY, "node-r", 1, 20, 101),  # past both
                sample(now, "node-r", 1, 1, 102)]
        self.insert(1, "samples", rows)
        self.shards.query(1, f"INSERT INTO profcpu.losses_local VALUES "
                             f"(toDateTime({now - 30 * DAY}), 'node-r', 100, 5, 'spool full')")
        node = "node = 'node-r'"
        self.assertEqual(self.count(0, f"SELECT sum(count) FROM profcpu.samples WHERE {node}"), 31)
        result = run(PROFCPU, "fleet", "retention", "-store", self.shards.store_flag,
                     "-keep", "7d", "-keep-rollup", "90d")
        self.assertEqual(result.returncode, 0, result.stderr)
        old_day = time.strftime("%Y%m%d", time.gmtime(now - 30 * DAY))
        older_month = time.strftime("%Y%m", time.gmtime(now - 200 * DAY))
        self.assertIn(f"dropped samples_local partition {old_day} on {self.shards.urls[1]}",
                      result.stdout)
        self.assertIn(f"dropped losses_local partition {old_day}", result.stdout)
        self.assertIn(f"dropped samples_hourly_local partition {older_month}", result.stdout)
        # Today's rows stay; the 30-day-old ones live on in the roll-up only.
        self.assertEqual(self.count(0, f"SELECT sum(count) FROM profcpu.samples WHERE {node}"), 1)
        self.assertEqual(self.count(0, f"SELECT count() FROM profcpu.losses WHERE {node}"), 0)
        self.assertEqual(
            self.count(0, f"SELECT sum(count) FROM profcpu.samples_hourly WHERE {node}"), 11)
        again = run(PROFCPU, "fleet", "retention", "-store", self.shards.store_flag, "-keep", "7d")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertNotIn(f"partition {old_day}", again.stdout)

    def test_retention_flags_are_checked(self):
        for flags, said in ((["-keep", "7"], "a number and a unit"),
                            (["-keep", "30d", "-keep-rollup", "7d"], "at least -keep")):
            result = run(PROFCPU, "fleet", "retention", "-store", self.shards.store_flag, *flags)
            self.assertEqual(result.returncode, 2)
            self.assertIn(said, result.stderr)

    def assert_one_line_error(self, stderr, *expected):
        lines = stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertTrue(lines[0].startswith("profcpu fleet init: ClickHouse at http://127.0.0.1:"),
                        lines[0])
        for text in expected:
            self.assertIn(text, lines[0])
        self.assertLess(len(lines[0]), 500)

    def test_a_store_that_refuses(self):
        result = run(PROFCPU, "fleet", "init", "-store", f"http://127.0.0.1:{closed_port()}")
        self.assertEqual(result.returncode, 1)
        self.assert_one_line_error(result.stderr, "connection refused")

    def test_a_store_that_answers_garbage(self):
        server = MisbehavingServer("garbage")
        self.addCleanup(server.stop)
        result = run(PROFCPU, "fleet", "init", "-store", server.url)
        self.assertEqual(result.returncode, 1)
        self.assert_one_line_error(result.stderr, "not an HTTP answer")

    def test_a_store_that_never_answers_times_out(self):
        server = MisbehavingServer("silent")
        self.addCleanup(server.stop)
        result = run(PROFCPU, "fleet", "init", "-store", server.url, "-timeout", "2")
        self.assertEqual(result.returncode, 1)
        self.assert_one_line_error(result.stderr, "timed out after 2s")

    def test_a_2gb_answer_is_abandoned_at_the_cap(self):
        for mode in ("announced", "streamed"):
            with self.subTest(mode=mode):
                server = MisbehavingServer(mode)
                self.addCleanup(server.stop)
                code, _, stderr, rss_mb = run_measured(PROFCPU, "fleet", "init", "-store",
                                                       server.url)
                self.assertEqual(code, 1)
                self.assert_one_line_error(stderr, "answer larger than 64 MB")
                print(f"\n{mode} 2 GB answer: client peak RSS {rss_mb:.0f} MB, "
                      f"server sent {server.sent >> 20} MB before the client left")
                self.assertLess(rss_mb, RSS_BOUND_MB)
                self.assertLess(server.sent, 256 << 20)

    def test_a_huge_error_page_gives_its_first_line(self):
        server = MisbehavingServer("error-page")
        self.addCleanup(server.stop)
        code, _, stderr, rss_mb = run_measured(PROFCPU, "fleet", "init", "-store", server.url)
        self.assertEqual(code, 1)
        self.assert_one_line_error(stderr, "HTTP 500: Code: 241, e.displayText() = "
                                           "DB::Exception: Memory limit (total) exceeded")
        self.assertLess(rss_mb, RSS_BOUND_MB)


if __name__ == "__main__":
    unittest.main()
