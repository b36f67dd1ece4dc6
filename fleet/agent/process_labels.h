// The labels the agent puts on a process's samples, by the store's label keys
// (fleet contract: node container cgroup pod_uid pod namespace comm exe
// runtime build_id), read from what the node shows about the process:
//   node       this machine's name (LabelSources::node)
//   container  the 64-hex container id in /proc/PID/cgroup (collector/proc/cgroup.h)
//   cgroup     the cgroup v2 path (absolute even from a private cgroup namespace)
//   pod_uid    kubepods...-pod<uid>.slice ('_' -> '-') or /kubepods/<qos>/pod<uid>/
//   pod        the process's HOSTNAME (/proc/PID/environ), only in a pod
//   namespace  the kubelet's pods/<uid>/volumes/kubernetes.io~projected/*/namespace,
//              else the process's own serviceaccount namespace file, read
//              inside its root (base/rooted_open.h), only in a pod
//   comm, exe  /proc/PID/comm; the file name of /proc/PID/exe's target
//   runtime    "dotnet 8.0.11" from a mapped .../Microsoft.NETCore.App/8.0.11/libcoreclr.so,
//              "dotnet" for a libcoreclr.so elsewhere (self-contained), else ""
//   build_id   the main executable's GNU build-id in hex, read inside the process's root
// Everything read is the target's to choose and is read bounded; a process
// that exits midway gives what was read before, never an error.
#ifndef PROFCPU_FLEET_AGENT_PROCESS_LABELS_H_
#define PROFCPU_FLEET_AGENT_PROCESS_LABELS_H_

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace profcpu::fleet {

struct ProcessLabels {
  std::string node;
  std::string container;
  std::string cgroup;
  std::string pod_uid;
  std::string pod;
  std::string pod_namespace;  // the `namespace` key
  std::string comm;
  std::string exe;
  std::string runtime;
  std::string build_id;

  // The values in the store's column order (kLabelKeys).
  std::array<absl::string_view, 10> Values() const {
    return {node, container, cgroup, pod_uid, pod, pod_namespace, comm, exe, runtime, build_id};
  }
  bool operator==(const ProcessLabels&) const = default;
};

inline constexpr std::array<absl::string_view, 10> kLabelKeys = {
    "node", "container", "cgroup", "pod_uid", "pod", "namespace", "comm", "exe", "runtime",
    "build_id"};

// Where labels are read from; tests point both roots at trees of their own.
struct LabelSources {
  std::string node;  // DefaultNodeName() unless -node NAME
  std::string proc = "/proc";
  std::string kubelet_pods = "/var/lib/kubelet/pods";
  // The absolute cgroup path of the agent's cgroup namespace root
  // (FindCgroupNamespaceRoot), "" when the agent shares the host's.
  std::string cgroup_namespace_root;
};

// This machine's host name ("" if it has none).
std::string DefaultNodeName();

// A container runtime usually gives the agent's container a cgroup namespace
// of its own (hostPID does not change that), rooted at the container's
// cgroup. The kernel then shows the cgroup of every process outside it
// relative to that root: "/../../kubepods-burstable.slice/...". This finds
// the root's absolute path once: the directory of the cgroup v2 hierarchy at
// `cgroup_mount` (the node's, mounted into the container) whose cgroup.procs
// holds this process. "" when this process shares PID 1's cgroup namespace
// (nothing to resolve) or when it cannot be found (at most `max_directories`
// are searched).
std::string FindCgroupNamespaceRoot(const std::string& proc, const std::string& cgroup_mount,
                                    size_t max_directories = 20000);

// The absolute form of a cgroup path shown relative to a namespace root:
// `namespace_root` + `path`, ".." resolved. With no root known, the leading
// "/.." parts are dropped (the best left to do).
std::string ResolveCgroupPath(absl::string_view namespace_root, absl::string_view path);

// The pod uid in a cgroup v2 path of a kubelet (systemd or cgroupfs driver),
// as the kubelet names the pod's folder (dashes), or "".
std::string PodUidFromCgroup(absl::string_view cgroup_path);

// The .NET runtime of a process from its /proc/PID/maps text (see above).
std::string DotnetRuntimeFromMaps(absl::string_view maps_text);

// The process's start time in clock ticks after boot (field 22 of
// /proc/PID/stat), or nullopt when the text does not say.
std::optional<uint64_t> StartTimeFromStat(absl::string_view stat_text);

// Reads the labels of `pid` now (uncached).
ProcessLabels ReadProcessLabels(pid_t pid, const LabelSources& sources);

// Labels by process, read once per process: an entry is keyed by pid and
// checked against the process's start time, so a reused pid is read afresh.
// A process gone from /proc keeps the labels it had (its last samples still
// get them). At most `max_entries` are kept; the least recently used goes
// first, so pods coming and going cannot grow the agent's memory.
class ProcessLabelCache {
 public:
  static constexpr size_t kDefaultMaxEntries = 8192;

  explicit ProcessLabelCache(LabelSources sources, size_t max_entries = kDefaultMaxEntries);

  // The labels of `pid`; valid as long as the caller holds them.
  std::shared_ptr<const ProcessLabels> Get(pid_t pid);

  size_t size() const { return order_.size(); }
  size_t max_entries() const { return max_entries_; }
  // Reads of /proc done (misses), for tests and the agent's log.
  uint64_t reads() const { return reads_; }
  const LabelSources& sources() const { return sources_; }

 private:
  struct Entry {
    pid_t pid = 0;
    uint64_t start_time = 0;  // 0: unknown (the process was already gone)
    std::shared_ptr<const ProcessLabels> labels;
  };
  using Order = std::list<Entry>;  // most recently used first

  LabelSources sources_;
  size_t max_entries_;
  Order order_;
  absl::flat_hash_map<pid_t, Order::iterator> by_pid_;
  uint64_t reads_ = 0;
};

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_PROCESS_LABELS_H_
