// A process's cgroup, as /proc/PID/cgroup tells it, and the container id a
// runtime encoded in it (docker-<id>.scope, libpod-<id>.scope,
// cri-containerd-<id>.scope, crio-<id>.scope, .../docker/<id>, ...).
#ifndef PROFCPU_COLLECTOR_PROC_CGROUP_H_
#define PROFCPU_COLLECTOR_PROC_CGROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::collector {

// The cgroup v2 path ("0::/path" line), "" if the process has none.
std::string CgroupV2Path(absl::string_view proc_cgroup_text);

// The 64-hex-digit container id in any line of /proc/PID/cgroup, "" if none.
std::string ContainerIdFromCgroup(absl::string_view proc_cgroup_text);

absl::StatusOr<std::string> ReadProcCgroup(pid_t pid, const std::string& proc = "/proc");

// Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on unified hosts,
// /sys/fs/cgroup/unified on hybrid ones. NotFound if neither.
absl::StatusOr<std::string> CgroupV2Mount();

// How the kernel knows a cgroup v2 directory: its id (what BPF's
// bpf_get_current_cgroup_id returns for a task in it) and its depth below
// the v2 root (the root is 0).
struct CgroupIdentity {
  uint64_t id = 0;
  uint32_t level = 0;
};

// InvalidArgument when `dir` is not a directory of the cgroup v2 hierarchy.
absl::StatusOr<CgroupIdentity> CgroupIdentityOf(const std::string& dir);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PROC_CGROUP_H_
