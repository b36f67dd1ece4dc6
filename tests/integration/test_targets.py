"""Profiling more than one process: every process of a podman container
(-container: cgroup perf events) and every process on the machine (-a); and
-pid given a thread id (its whole process)."""

import os
import shutil
import subprocess
import time
import unittest

import profcpu_testing as t

SOURCE_ROOT = os.path.dirname(os.path.dirname(t.FIXTURE_SOURCES))


class SystemWideTest(unittest.TestCase):
    def test_all_processes(self):
        tmp = t.TempDir()
        target = t.start([t.fixture("cpu_shares")])
        try:
            time.sleep(0.3)
            result = t.run_profcpu(["collect", "-a", "-duration", "3", "-freq", "199", "-out",
                                    tmp.path], timeout=180)
            run_dir = result.stdout.strip()
            folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
            meta = t.read_metadata(run_dir)
        finally:
            t.stop(target)
            tmp.cleanup()
        self.assertEqual(meta["target"], "all processes")
        roots = {stack[0] for stack in folded}
        self.assertIn("cpu_shares", roots)
        self.assertGreater(len(meta["processes"]), 3, "every process is described")
        self.assertGreater(t.samples_with(folded, lambda f: f == "burn_fifty_percent"), 50)

    def test_exactly_one_target(self):
        result = t.run_profcpu(["collect", "-a", "-pid", "1"], check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("only one of -pid, -container and -a", result.stderr)
        result = t.run_profcpu(["collect", "-container", "0123456789ab"], check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("no running container with id 0123456789ab", result.stderr)


class ThreadIdTest(unittest.TestCase):
    def test_a_thread_id_profiles_its_process_with_named_frames(self):
        tmp = t.TempDir()
        target = t.start([t.fixture("demo_workload"), "3"])
        try:
            t.wait_for(lambda: len(os.listdir(f"/proc/{target.pid}/task")) >= 4)
            worker = max(int(tid) for tid in os.listdir(f"/proc/{target.pid}/task"))
            self.assertNotEqual(worker, target.pid)
            # Longer than the target lives: the collection must see its end.
            run_dir = t.collect(worker, tmp.path, duration=20, freq=199)
            folded = t.read_folded(os.path.join(run_dir, "folded_stacks.out"))
            meta = t.read_metadata(run_dir)
            with open(os.path.join(run_dir, "profcpu.log"), encoding="utf-8") as f:
                log = f.read()
        finally:
            t.stop(target)
            tmp.cleanup()
        self.assertEqual(meta["target"], f"pid {target.pid} (the process of thread {worker})")
        self.assertIn(f"pid {worker} is a thread of process {target.pid}: profiling the whole "
                      "process", log)
        self.assertEqual(meta["collection"]["stop_reason"], "target exited")
        self.assertEqual(meta["processes"][0]["pid"], target.pid)
        # User frames are named from the process's mappings.
        self.assertGreater(t.samples_with(folded, lambda f: f == "handle_request"),
                           0.5 * sum(folded.values()), folded)


class ContainerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("podman") is None:
            raise AssertionError("podman is required (scripts/setup.sh installs it)")
        build_dir = os.path.dirname(os.path.dirname(t.PROFCPU))
        result = subprocess.run(["bash", os.path.join(SOURCE_ROOT, "scripts",
                                                      "container-images.sh"), build_dir],
                                capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            raise AssertionError(f"building the images failed:\n{result.stderr}")
        # The sidecar image, not the bare base: it carries the sanitizer
        # runtimes the fixtures need when the suite runs under ASan + UBSan.
        cls.image = result.stdout.split()[1]

    def setUp(self):
        self.tmp = t.TempDir()
        self.name = f"profcpu-test-target-{os.getpid()}"
        subprocess.run(["podman", "rm", "-f", self.name], capture_output=True)

    def tearDown(self):
        subprocess.run(["podman", "rm", "-f", "-t", "0", self.name], capture_output=True)
        self.tmp.cleanup()

    def start_container(self, seconds):
        fixtures = os.path.dirname(t.fixture("cpu_shares"))
        # Two processes in the container: both must be profiled.
        command = (f"/fixtures/cpu_shares {seconds} & /fixtures/syscall_heavy {seconds} & wait")
        subprocess.run(["podman", "run", "-d", "--name", self.name, "--network", "none",
                        "-v", f"{fixtures}:/fixtures:ro", "--entrypoint", "sh", self.image,
                        "-c", command],
                       check=True, capture_output=True, timeout=120)
        return subprocess.run(["podman", "inspect", "--format", "{{.Id}}", self.name],
                              capture_output=True, text=True, check=True).stdout.strip()

    def collect(self, what, duration):
        result = t.run_profcpu(["collect", "-container", what, "-duration", str(duration),
                                "-freq", "199", "-out", self.tmp.path], timeout=180)
        run_dir = result.stdout.strip()
        return run_dir, t.read_folded(os.path.join(run_dir, "folded_stacks.out"))

    def test_every_process_of_the_container_and_nothing_else(self):
        container_id = self.start_container(30)
        outsider = t.start([t.fixture("cpu_shares")])  # same program, outside the container
        try:
            time.sleep(0.5)
            run_dir, folded = self.collect(container_id[:12], 4)
        finally:
            t.stop(outsider)
        meta = t.read_metadata(run_dir)
        self.assertEqual(meta["target"], f"container {container_id}")
        # Three busy processes share two (loaded) CPUs: expect a fair part.
        self.assertGreater(t.samples_with(folded, lambda f: f == "burn_fifty_percent"), 20)
        # syscall_heavy's stacks pass through libc's write, which keeps no
        # frame pointer: its caller is lost, the kernel frames are not.
        in_kernel = sum(c for stack, c in folded.items()
                        if stack[0] == "syscall_heavy" and "do_syscall_64" in stack)
        self.assertGreater(in_kernel, 20)
        pids = {p["pid"] for p in meta["processes"]}
        self.assertNotIn(outsider.pid, pids)
        # The samples all belong to the container's processes (pid 1 is sh).
        in_container = {p["pid"] for p in meta["processes"] if p["namespace_pids"][-1] != p["pid"]}
        self.assertTrue(in_container)
        samples = t.parse_like_flamescope(os.path.join(run_dir, "perf_script.out"))
        self.assertTrue(samples)

    def test_by_cgroup_path(self):
        self.start_container(20)
        pid = int(subprocess.run(["podman", "inspect", "--format", "{{.State.Pid}}", self.name],
                                 capture_output=True, text=True, check=True).stdout)
        with open(f"/proc/{pid}/cgroup") as f:
            path = next(line.split("::", 1)[1].strip() for line in f if line.startswith("0::"))
        run_dir, folded = self.collect(path, 4)
        self.assertTrue(t.read_metadata(run_dir)["target"].startswith("cgroup "))
        # 4 s at 199 Hz of three busy processes on two shared CPUs: a tenth
        # of the share burn_fifty_percent gets on a quiet machine.
        self.assertGreater(t.samples_with(folded, lambda f: f == "burn_fifty_percent"), 10)

    def test_by_name_until_it_exits(self):
        self.start_container(4)
        start = time.monotonic()
        run_dir, folded = self.collect(self.name, 60)
        self.assertLess(time.monotonic() - start, 30)
        self.assertEqual(t.read_metadata(run_dir)["collection"]["stop_reason"], "container exited")
        self.assertGreater(t.samples_with(folded, lambda f: f == "burn_fifty_percent"), 20)


if __name__ == "__main__":
    unittest.main()
