// What a collection samples: a running process (-pid), a command profcpu
// starts (record), every process of a container (-container, cgroup perf
// events) or every process on the machine (-a, per-CPU events).
#ifndef PROFCPU_COLLECTOR_COLLECTION_TARGET_H_
#define PROFCPU_COLLECTOR_COLLECTION_TARGET_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "collector/command_launcher.h"
#include "collector/sampler.h"

namespace profcpu::collector {

struct TargetSpec {
  pid_t pid = 0;
  std::vector<std::string> command;
  std::string cgroup_dir;      // absolute cgroup v2 directory
  std::string container_id;    // for messages; may be empty with cgroup_dir
  bool all_processes = false;
};

class CollectionTarget {
 public:
  // InvalidArgument unless exactly one kind of target is given; NotFound if
  // the process or cgroup does not exist.
  static absl::StatusOr<std::unique_ptr<CollectionTarget>> Create(const TargetSpec& spec);

  std::string Description() const;  // for the header and messages
  bool starts_command() const { return launcher_ != nullptr; }
  // The one process profiled (pid mode), or the command; 0 otherwise.
  pid_t main_pid() const;
  // pid mode given a thread id: that thread (main_pid() is its process, whose
  // threads are all sampled, as perf record -p does); 0 otherwise.
  pid_t given_thread() const { return given_thread_; }

  // Opens the perf events for this target.
  absl::Status Attach(Sampler* sampler);
  // Processes that exist now, whose state must be synthesized from /proc.
  std::vector<pid_t> ExistingProcesses() const;
  // Releases a started command (after its events are open).
  absl::Status Start();
  // The stop reason once the target is gone ("target exited"); sets the
  // command's exit code in record mode.
  std::optional<std::string> Ended(int* exit_code);
  // Passes a stop signal to a started command; false if there is none.
  bool ForwardSignal(int signal_number);

 private:
  explicit CollectionTarget(TargetSpec spec) : spec_(std::move(spec)) {}

  TargetSpec spec_;
  std::unique_ptr<CommandLauncher> launcher_;
  pid_t given_thread_ = 0;
  base::UniqueFd pidfd_;   // pid mode: readable once the process exits
  base::UniqueFd cgroup_;  // container mode: the cgroup directory
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_COLLECTION_TARGET_H_
