// The root directories of the processes a collection sees, opened while they
// live (so their files can be read after they exit) and shared between
// processes with the same root, so profiling a machine of 500 processes in
// three containers holds four descriptors, not 500.
#ifndef PROFCPU_COLLECTOR_PROCESS_ROOTS_H_
#define PROFCPU_COLLECTOR_PROCESS_ROOTS_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "base/rooted_open.h"

namespace profcpu::collector {

class ProcessRoots {
 public:
  // Opens (or reuses) the root of `pid`; nullptr if it cannot be opened,
  // with the reason in last_error().
  std::shared_ptr<base::RootDir> Add(pid_t pid);
  // The root of `pid` opened again now, when it is the same directory as
  // the one Add opened: a process that entered a mount namespace of its own
  // since (a command opened before it exec'd `unshare -m`, a container
  // runtime's child) sees other mounts (its own /tmp) through a new open,
  // while a pid reused by a process with another root gets Add's. nullptr
  // when the root cannot be opened now: the process has exited (the kernel
  // drops a task's root as it exits) or may not be read.
  std::shared_ptr<base::RootDir> Current(pid_t pid);
  const absl::Status& last_error() const { return last_error_; }
  bool Contains(pid_t pid) const { return by_pid_.contains(static_cast<uint32_t>(pid)); }
  const std::map<uint32_t, std::shared_ptr<base::RootDir>>& by_pid() const { return by_pid_; }

 private:
  std::map<uint32_t, std::shared_ptr<base::RootDir>> by_pid_;
  std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<base::RootDir>> by_identity_;
  absl::Status last_error_;
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PROCESS_ROOTS_H_
