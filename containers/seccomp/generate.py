#!/usr/bin/env python3
"""Derives profcpu's seccomp profile from podman's default one.

    python3 containers/seccomp/generate.py [DEFAULT_PROFILE] > containers/seccomp/profcpu.json

DEFAULT_PROFILE defaults to /usr/share/containers/seccomp.json (Debian
bookworm: golang-github-containers-common 0.50.1). The output is that
profile with one change, so a profcpu sidecar keeps every other filter the
engine applies to any container:

  perf_event_open  allowed to a container that holds CAP_PERFMON (the
                   default allows it only with CAP_SYS_ADMIN);
  bpf              allowed to a container that holds CAP_BPF (the BPF modes:
                   -mode offcpu|wall, -backend bpf).

Both stay allowed with CAP_SYS_ADMIN, as before, and keep failing with EPERM
without any of these capabilities, so profcpu's advice names the missing
capability. This is what moby's (Docker's) default profile has done since
Docker 20.10; the kernel still checks perf_event_paranoid and the
capabilities itself (Documentation/admin-guide/perf-security.rst,
Documentation/bpf/bpf_design_QA.rst). Nothing else profcpu calls is refused
by the default: openat2, pidfd_open, process_vm_readv, setns and syslog are
allowed unconditionally there.

The rules use the `includes`/`excludes` capability conditions that podman,
CRI-O (containers/common) and Docker/containerd (moby's profile format) all
evaluate against the container's capability set when they build the filter.
Output is deterministic: the same input gives the same bytes.
"""

import json
import sys

DEFAULT = "/usr/share/containers/seccomp.json"

# syscall -> the capabilities that each allow it on their own.
GRANTS = {
    "perf_event_open": ["CAP_PERFMON", "CAP_SYS_ADMIN"],
    "bpf": ["CAP_BPF", "CAP_SYS_ADMIN"],
}


def derive(profile):
    syscalls = []
    for rule in profile["syscalls"]:
        names = [n for n in rule["names"] if n not in GRANTS]
        if names:
            syscalls.append(dict(rule, names=names))
    for name, caps in GRANTS.items():
        for cap in caps:
            syscalls.append({"names": [name], "action": "SCMP_ACT_ALLOW", "args": [],
                             "comment": f"profcpu: {name} with {cap}",
                             "includes": {"caps": [cap]}, "excludes": {}})
        # Without any of them: EPERM, as the kernel itself would answer, not
        # the profile's default ENOSYS ("not implemented" would mislead).
        syscalls.append({"names": [name], "action": "SCMP_ACT_ERRNO", "args": [],
                         "comment": f"profcpu: {name} refused without {' or '.join(caps)}",
                         "includes": {}, "excludes": {"caps": caps},
                         "errnoRet": 1, "errno": "EPERM"})
    return dict(profile, syscalls=syscalls)


def main(argv):
    path = argv[1] if len(argv) > 1 else DEFAULT
    with open(path, encoding="utf-8") as f:
        profile = json.load(f)
    missing = [name for name in GRANTS if not any(name in r["names"] for r in profile["syscalls"])]
    if missing:
        sys.exit(f"{path}: no rule names {', '.join(missing)}; is this a container seccomp profile?")
    json.dump(derive(profile), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
