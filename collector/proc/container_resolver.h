// Turns what a user calls a container (an id or id prefix as docker and
// podman print it, a container name, or a cgroup path) into the cgroup v2
// directory that cgroup perf events and the process list use.
#ifndef PROFCPU_COLLECTOR_PROC_CONTAINER_RESOLVER_H_
#define PROFCPU_COLLECTOR_PROC_CONTAINER_RESOLVER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::collector {

struct ContainerTarget {
  std::string cgroup_dir;    // absolute, inside the cgroup v2 mount
  std::string container_id;  // the full id, empty when given a cgroup path
};

// `what`: a cgroup path ("/machine.slice/x.scope", absolute or relative to the
// v2 mount), a container id or unique id prefix, or a name (looked up with
// `podman inspect` / `docker inspect` when those commands exist).
absl::StatusOr<ContainerTarget> ResolveContainer(absl::string_view what,
                                                 const std::string& proc = "/proc");

// The cgroup directory that holds `container_id`: the ancestor of
// `process_cgroup` (a v2 path) whose last component names the id.
std::string ContainerCgroupPath(absl::string_view process_cgroup, absl::string_view container_id);

// Every process in the cgroup and its descendants (cgroup.procs, recursively).
std::vector<pid_t> CgroupProcesses(const std::string& cgroup_dir);

// False once the cgroup and its descendants hold no process (cgroup.events).
bool CgroupPopulated(const std::string& cgroup_dir);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PROC_CONTAINER_RESOLVER_H_
