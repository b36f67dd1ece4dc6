"""The shipped container configuration: the Kubernetes manifests in
containers/k8s/ validate against the Kubernetes API schema (offline, through
the kubernetes-models package scripts/setup.sh installs), broken copies of
them do not, and the seccomp profile is what its generator derives from the
engine's default profile."""

import copy
import glob
import json
import os
import shutil
import subprocess
import unittest

import yaml

import profcpu_testing as t

SOURCE_ROOT = os.path.dirname(os.path.dirname(t.FIXTURE_SOURCES))
K8S = os.path.join(SOURCE_ROOT, "containers", "k8s")
SECCOMP = os.path.join(SOURCE_ROOT, "containers", "seccomp")
MODELS = os.environ.get("PROFCPU_K8S_MODELS", "/opt/profcpu-k8s/node_modules")


def load_manifests():
    entries = []
    for path in sorted(glob.glob(os.path.join(K8S, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            for document in yaml.safe_load_all(f):
                entries.append({"file": os.path.basename(path), "object": document})
    return entries


def validate(entries):
    node = shutil.which("node")
    if node is None:
        raise AssertionError("node is required to validate the manifests (scripts/setup.sh)")
    return subprocess.run([node, os.path.join(K8S, "validate.mjs"), MODELS],
                          input=json.dumps(entries), capture_output=True, text=True, timeout=120)


def sidecar_container(entries, file_name):
    """The profcpu container of a manifest (its spec for the debug one)."""
    document = next(e["object"] for e in entries if e["file"] == file_name)
    if "kind" not in document:
        return document
    spec = document["spec"]
    spec = spec["template"]["spec"] if "template" in spec else spec
    return next(c for c in spec["containers"] if c["name"] == "profcpu")


class ManifestTest(unittest.TestCase):
    def test_every_manifest_is_valid(self):
        entries = load_manifests()
        files = {e["file"] for e in entries}
        self.assertEqual(files, {"pod-sidecar.yaml", "daemonset.yaml", "debug-container.yaml",
                                 "fleet-agent.yaml"})
        result = validate(entries)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(result.stdout.count("\nok ") + result.stdout.startswith("ok "),
                         len(entries), result.stdout)

    def test_broken_copies_are_refused(self):
        entries = load_manifests()
        pod = copy.deepcopy(next(e for e in entries if e["file"] == "pod-sidecar.yaml"))
        pod["object"]["spec"]["shareProcessNamespace"] = "yes"
        daemonset = copy.deepcopy(next(e for e in entries if e["file"] == "daemonset.yaml"))
        sidecar_container([daemonset], "daemonset.yaml")["securityContext"]["capabilities"][
            "add"] = "PERFMON"
        debug = copy.deepcopy(next(e for e in entries if e["file"] == "debug-container.yaml"))
        del debug["object"]["name"]
        result = validate([pod, daemonset, debug])
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("spec/shareProcessNamespace must be boolean", result.stdout)
        self.assertIn("capabilities/add must be array", result.stdout)
        self.assertIn("must have required property name", result.stdout)
        self.assertNotIn("\nok ", "\n" + result.stdout)

    def test_validator_fails_loudly_without_its_schemas(self):
        result = subprocess.run([shutil.which("node") or "node",
                                 os.path.join(K8S, "validate.mjs"), "/nonexistent"],
                                input="[]", capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn("kubernetes-models not found", result.stderr)

    def test_least_privilege_everywhere(self):
        """No manifest asks for privileged or unconfined seccomp; all ask for
        the same capabilities as scripts/profile-container."""
        entries = load_manifests()
        for name in ("pod-sidecar.yaml", "daemonset.yaml", "debug-container.yaml"):
            context = sidecar_container(entries, name)["securityContext"]
            self.assertFalse(context.get("privileged", False), name)
            self.assertEqual(context["capabilities"]["drop"], ["ALL"], name)
            self.assertEqual(sorted(context["capabilities"]["add"]),
                             ["DAC_OVERRIDE", "PERFMON", "SYSLOG", "SYS_PTRACE"], name)
            self.assertEqual(context["seccompProfile"],
                             {"type": "Localhost", "localhostProfile": "profcpu.json"}, name)
        with open(os.path.join(SOURCE_ROOT, "scripts", "profile-container"),
                  encoding="utf-8") as f:
            script = f.read()
        for cap in ("PERFMON", "SYS_PTRACE", "SYSLOG", "DAC_OVERRIDE"):
            self.assertIn(f"--cap-add {cap}", script)


class FleetAgentManifestTest(unittest.TestCase):
    """The fleet agent's DaemonSet (docs/fleet.md): what the agent needs and no more."""

    def setUp(self):
        entries = [e for e in load_manifests() if e["file"] == "fleet-agent.yaml"]
        self.entries = entries
        self.config = next(e["object"] for e in entries if e["object"]["kind"] == "ConfigMap")
        self.daemonset = next(e["object"] for e in entries if e["object"]["kind"] == "DaemonSet")
        self.pod = self.daemonset["spec"]["template"]["spec"]
        self.agent = next(c for c in self.pod["containers"] if c["name"] == "agent")

    def test_runs_the_agent_with_the_store_from_the_config_map_and_the_node_name(self):
        self.assertEqual(self.agent["args"],
                         ["agent", "-store", "$(PROFCPU_STORE)", "-spool", "/var/lib/profcpu/spool",
                          "-node", "$(NODE_NAME)"])
        env = {e["name"]: e["valueFrom"] for e in self.agent["env"]}
        self.assertEqual(env["NODE_NAME"], {"fieldRef": {"fieldPath": "spec.nodeName"}})
        self.assertEqual(env["PROFCPU_STORE"],
                         {"configMapKeyRef": {"name": "profcpu-fleet", "key": "store"}})
        self.assertEqual(self.config["metadata"]["name"], "profcpu-fleet")
        for url in self.config["data"]["store"].split(","):
            self.assertRegex(url, r"^http://[^/:]+:\d+$")

    def test_host_pid_capabilities_for_bpf_and_not_privileged(self):
        self.assertTrue(self.pod["hostPID"])
        context = self.agent["securityContext"]
        self.assertFalse(context["privileged"])
        self.assertFalse(context["allowPrivilegeEscalation"])
        self.assertEqual(context["capabilities"]["drop"], ["ALL"])
        self.assertEqual(sorted(context["capabilities"]["add"]),
                         ["BPF", "DAC_OVERRIDE", "PERFMON", "SYSLOG", "SYS_PTRACE"])
        self.assertEqual(context["seccompProfile"],
                         {"type": "Localhost", "localhostProfile": "profcpu.json"})
        self.assertEqual(self.agent["resources"]["limits"]["memory"], "128Mi")

    def test_mounts(self):
        mounts = {m["mountPath"]: m for m in self.agent["volumeMounts"]}
        volumes = {v["name"]: v["hostPath"] for v in self.pod["volumes"]}
        self.assertEqual(set(mounts), {"/var/lib/profcpu/spool", "/sys/fs/cgroup",
                                       "/var/lib/kubelet/pods"})
        for path in ("/sys/fs/cgroup", "/var/lib/kubelet/pods"):
            self.assertTrue(mounts[path]["readOnly"], path)
            self.assertEqual(volumes[mounts[path]["name"]]["path"], path)
        # Pods started after the agent: their token volumes are mounts of their own.
        self.assertEqual(mounts["/var/lib/kubelet/pods"]["mountPropagation"], "HostToContainer")
        spool = mounts["/var/lib/profcpu/spool"]
        self.assertFalse(spool.get("readOnly", False))
        self.assertEqual(volumes[spool["name"]],
                         {"path": "/var/lib/profcpu/spool", "type": "DirectoryOrCreate"})

    def test_broken_copy_is_refused(self):
        broken = copy.deepcopy(self.entries)
        daemonset = next(e["object"] for e in broken if e["object"]["kind"] == "DaemonSet")
        agent = daemonset["spec"]["template"]["spec"]["containers"][0]
        agent["env"][0]["valueFrom"]["fieldRef"] = "spec.nodeName"
        result = validate(broken)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("fieldRef must be object", result.stdout)
        self.assertIn("ok fleet-agent.yaml: ConfigMap", result.stdout)


class SeccompProfileTest(unittest.TestCase):
    DEFAULT = "/usr/share/containers/seccomp.json"

    def test_shipped_profile_is_the_generated_one(self):
        if not os.path.exists(self.DEFAULT):
            raise AssertionError(f"{self.DEFAULT} is missing (scripts/setup.sh installs podman)")
        result = subprocess.run(["python3", os.path.join(SECCOMP, "generate.py"), self.DEFAULT],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(SECCOMP, "profcpu.json"), encoding="utf-8") as f:
            self.assertEqual(result.stdout, f.read(),
                             "regenerate: containers/seccomp/generate.py > containers/seccomp/profcpu.json")

    def test_only_perf_event_open_and_bpf_change(self):
        with open(self.DEFAULT, encoding="utf-8") as f:
            default = json.load(f)
        with open(os.path.join(SECCOMP, "profcpu.json"), encoding="utf-8") as f:
            ours = json.load(f)

        def allowed(profile, caps):
            """Syscalls the profile allows unconditionally or for these caps."""
            names = set()
            for rule in profile["syscalls"]:
                need = rule.get("includes", {}).get("caps", [])
                refuse = rule.get("excludes", {}).get("caps", [])
                if rule["action"] == "SCMP_ACT_ALLOW" and not rule.get("args") and \
                        set(need) <= caps and not set(refuse) & caps and \
                        not rule.get("includes", {}).get("arches") and \
                        not rule.get("includes", {}).get("minKernel"):
                    names.update(rule["names"])
            return names

        sidecar = {"CAP_PERFMON", "CAP_SYS_PTRACE", "CAP_SYSLOG", "CAP_DAC_OVERRIDE"}
        self.assertEqual(allowed(ours, sidecar) - allowed(default, sidecar), {"perf_event_open"})
        self.assertEqual(allowed(ours, {"CAP_BPF"}) - allowed(default, {"CAP_BPF"}), {"bpf"})
        self.assertEqual(allowed(default, sidecar) - allowed(ours, sidecar), set())
        self.assertNotIn("perf_event_open", allowed(ours, set()))
        self.assertEqual(ours["defaultAction"], default["defaultAction"])


if __name__ == "__main__":
    unittest.main()
