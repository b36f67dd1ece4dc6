"""The fleet agent against real ClickHouse shards this test starts (two, on
loopback, stopped by pid): what it stores is what it took, while a shard is
down, while the store is slow, when the spool's cap forces windows out; a
container's samples carry its id; a store answering garbage or a huge body
leaves the agent within its memory bound.

Fixtures: cpu_shares burns 20/30/50% of its own CPU time in
burn_twenty_percent, burn_thirty_percent and burn_fifty_percent."""

import datetime
import os
import subprocess
import time
import unittest

import fleet_testing as ft
import profcpu_testing as t
from clickhouse_shards import ClickHouseShards


def utc(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


class FleetAgentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = t.TempDir()
        cls.shards = ClickHouseShards(cls.tmp.path, n=2).start()
        try:
            t.run_profcpu(["fleet", "init", "-store", cls.shards.store_flag])
        except Exception:
            cls.shards.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.shards.stop()
        cls.tmp.cleanup()

    def stored_samples(self, node):
        # Through the Distributed table: every shard's rows.
        return int(self.shards.query(
            0, f"SELECT sum(count) FROM profcpu.samples WHERE node = '{node}'").strip() or 0)

    def shard_of(self, agent):
        url = agent.wait_for_log(r" to (http://\S+); spool", 60).group(1)
        return self.shards.urls.index(url)

    def start_fixtures(self, n=2):
        procs = [t.start([t.fixture("cpu_shares")]) for _ in range(n)]
        for p in procs:
            self.addCleanup(t.stop, p)
        return procs

    def test_outage_of_its_shard_loses_nothing_and_shares_hold(self):
        """Two minutes of two cpu_shares processes at 499 Hz (up to 2 x 59,880
        samples; at least 12,000 on a machine the tests share, where a
        share's sampling error is under 0.46 points: 1 point is over 2 of
        them, and each round's random length keeps the sampling unbiased),
        the agent's own shard stopped for 30 s in the middle: the store ends
        up with exactly the samples the agent took, and the query's shares
        are within 1 point of what cpu_shares burns."""
        self.start_fixtures(2)
        node = "node-outage"
        agent = ft.Agent(self.tmp.path, self.shards.store_flag,
                         ["-node", node, "-freq", "499", "-window", "10", "-store-timeout", "5"],
                         name="outage")
        self.addCleanup(agent.kill)
        shard = self.shard_of(agent)
        began = time.time()
        time.sleep(40)
        self.shards.stop_shard(shard)
        time.sleep(30)
        self.shards.start_shard(shard)
        time.sleep(max(0, 125 - (time.time() - began)))
        totals = agent.stop()
        ended = time.time()
        log = agent.log()
        self.assertIn("windows wait in the spool", log)  # the outage was seen
        self.assertIn("the store answers again", log)
        self.assertEqual(totals["windows_lost"], 0, log)
        self.assertEqual(totals["waiting"], 0, log)
        self.assertEqual(totals["samples_sent"], totals["samples"], log)
        self.assertEqual(sum(n for _, n in agent.windows_logged()), totals["samples"])
        self.assertGreater(totals["samples"], 12000)
        self.assertEqual(self.stored_samples(node), totals["samples"])
        print(f"\noutage: {totals['windows']} windows, {totals['samples']} samples taken, "
              f"{totals['samples_sent']} stored, {self.stored_samples(node)} in the store")

        folded = os.path.join(self.tmp.path, "outage.folded")
        t.run_profcpu(["query", "-store", self.shards.store_flag, "-from", utc(began - 5),
                       "-to", utc(ended + 5), "-where", f"node={node},comm=cpu_shares",
                       "-o", folded])
        stacks = t.read_folded(folded)
        total = sum(stacks.values())
        self.assertGreater(total, 12000)
        shares = {f: 100.0 * t.samples_with(stacks, lambda s: f in s) / total
                  for f in ("burn_twenty_percent", "burn_thirty_percent", "burn_fifty_percent")}
        print(f"\nquery over {total} samples: " +
              ", ".join(f"{f} {v:.2f}%" for f, v in shares.items()))
        for function, truth in (("burn_twenty_percent", 20), ("burn_thirty_percent", 30),
                                ("burn_fifty_percent", 50)):
            self.assertLess(abs(shares[function] - truth), 1.0,
                            f"{function}: {shares[function]:.2f}% vs {truth}%")

    def test_window_stored_by_a_send_that_timed_out_is_not_sent_again(self):
        self.start_fixtures(1)
        node = "node-slow"
        index = None
        # The proxy stands in for the node's shard; the other URL is real.
        proxies = [ft.SlowAfterInsertProxy(url, delay=4, delays=2) for url in self.shards.urls]
        for p in proxies:
            self.addCleanup(p.stop)
        agent = ft.Agent(self.tmp.path, ",".join(p.url for p in proxies),
                         ["-node", node, "-window", "3", "-store-timeout", "2"], name="slow")
        self.addCleanup(agent.kill)
        agent.wait_for_log(r"was stored by an earlier send that timed out", 90)
        time.sleep(4)
        totals = agent.stop()
        print(f"\nslow store: {totals['found_stored']} windows found stored on retry, "
              f"{totals['samples']} samples taken, {self.stored_samples(node)} in the store")
        self.assertGreaterEqual(totals["found_stored"], 1, agent.log())
        self.assertEqual(totals["windows_lost"], 0, agent.log())
        self.assertEqual(totals["samples_sent"], totals["samples"], agent.log())
        self.assertEqual(self.stored_samples(node), totals["samples"])

    def test_spool_cap_reached_counts_the_loss_here_and_in_the_store(self):
        self.start_fixtures(1)
        node = "node-spool"
        agent = ft.Agent(self.tmp.path, self.shards.store_flag,
                         ["-node", node, "-window", "2", "-freq", "999", "-spool-mb", "0.03",
                          "-store-timeout", "2"], name="spool")
        self.addCleanup(agent.kill)
        shard = self.shard_of(agent)
        self.shards.stop_shard(shard)
        try:
            agent.wait_for_log(r"lost \(\d+ samples\): spool full", 120)
        finally:
            self.shards.start_shard(shard)
        agent.wait_for_log(r"the store answers again", 120)
        time.sleep(3)
        totals = agent.stop()
        log = agent.log()
        self.assertGreater(totals["windows_lost"], 0, log)
        self.assertEqual(totals["waiting"], 0, log)
        self.assertEqual(totals["samples_sent"] + totals["samples_lost"], totals["samples"], log)
        self.assertEqual(self.stored_samples(node), totals["samples_sent"])
        lost = self.shards.query(shard, "SELECT count(), sum(samples), any(reason) FROM "
                                        f"profcpu.losses_local WHERE node = '{node}'").split("\t")
        self.assertEqual(int(lost[0]), totals["windows_lost"])
        self.assertEqual(int(lost[1]), totals["samples_lost"])
        self.assertIn("spool full", lost[2])
        print(f"\nspool cap: {totals['samples']} samples taken, {totals['samples_sent']} stored, "
              f"{totals['windows_lost']} windows ({totals['samples_lost']} samples) lost; "
              f"losses table: {lost[0]} windows, {lost[1]} samples, '{lost[2]}'")

    def test_container_samples_carry_its_id(self):
        import test_bare_container as bare
        bare.ensure_base_image()
        name = "profcpu-fleet-busy"
        subprocess.run(["podman", "rm", "-f", name], capture_output=True)
        started = subprocess.run(
            ["podman", "run", "-d", "--name", name, "--network", "none", bare.BASE_IMAGE,
             "/bin/sh", "-c", "timeout 120 sh -c 'while :; do :; done'"],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(started.returncode, 0, started.stderr)
        self.addCleanup(subprocess.run, ["podman", "rm", "-f", "-t", "1", name],
                        capture_output=True)
        container_id = started.stdout.strip()
        node = "node-container"
        agent = ft.Agent(self.tmp.path, self.shards.store_flag,
                         ["-node", node, "-window", "5"], name="container")
        self.addCleanup(agent.kill)
        agent.wait_for_log(r"window \d+: [1-9]\d* samples", 60)
        totals = agent.stop()
        self.assertEqual(totals["samples_sent"], totals["samples"])
        rows = self.shards.query(0, "SELECT comm, sum(count) FROM profcpu.samples WHERE "
                                    f"node = '{node}' AND container = '{container_id}' "
                                    "GROUP BY comm ORDER BY sum(count) DESC")
        self.assertTrue(rows.startswith("sh\t"), rows)
        busy = int(rows.split("\n")[0].split("\t")[1])
        self.assertGreater(busy, 0.5 * totals["samples"] / 2, rows)  # one of two cores


class HostileStoreTest(unittest.TestCase):
    """Stores that answer slowly, with errors full of garbage, or with 2 GB:
    the agent says so in one line, keeps its windows in the spool for its
    next start, and stays under 100 MB (the agent's target). It profiles one
    fixture here, so its memory is the agent's own and the store's doing,
    not the symbol tables of whatever else this machine runs (bench/fleet.sh
    measures the whole node)."""

    def run_against(self, handler, name):
        tmp = t.TempDir()
        self.addCleanup(tmp.cleanup)
        store = ft.FakeStore(handler)
        self.addCleanup(store.stop)
        target = t.start([t.fixture("cpu_shares")])
        self.addCleanup(t.stop, target)
        agent = ft.Agent(tmp.path, store.url,
                         ["-node", name, "-window", "2", "-store-timeout", "2",
                          "-pid", str(target.pid)], name=name)
        self.addCleanup(agent.kill)
        time.sleep(15)
        rss_kb = agent.max_rss_kb()
        print(f"\n{name}: agent peak RSS {rss_kb // 1024} MB, {store.requests} requests")
        totals = agent.stop(timeout=60)
        log = agent.log()
        self.assertGreater(store.requests, 0)
        self.assertEqual(totals["windows_sent"], 0, log)
        self.assertEqual(totals["windows_lost"], 0, log)
        self.assertGreater(totals["waiting"], 0, log)  # kept for the next start
        self.assertLess(rss_kb, 100 * 1024, f"agent's peak RSS {rss_kb} kB")
        warnings = [line for line in log.splitlines() if "warning:" in line]
        self.assertTrue(warnings, log)
        for line in warnings:
            self.assertLess(len(line), 1000, line)  # one line, capped
        return "\n".join(warnings)

    def test_slow_store(self):
        def never(request):
            time.sleep(30)
        self.assertRegex(self.run_against(never, "slow"), r"timed out")

    def test_error_full_of_garbage(self):
        def failing(request):
            body = (b"Code: 999, e.displayText() = DB::Exception: \x00\xff" + b"x" * 100000 +
                    b"\nsecond line\n")
            request.send_response(500)
            request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            request.wfile.write(body)
        warnings = self.run_against(failing, "failing")
        self.assertIn("Code: 999", warnings)
        self.assertNotIn("second line", warnings)

    def test_two_gigabyte_answer(self):
        def huge(request):
            request.send_response(200)
            request.send_header("Content-Length", str(2 << 30))
            request.end_headers()
            chunk = b"y" * (1 << 20)
            try:
                for _ in range(2048):
                    request.wfile.write(chunk)
            except OSError:
                pass
        self.assertRegex(self.run_against(huge, "huge"), r"larger|too large")


if __name__ == "__main__":
    unittest.main()
