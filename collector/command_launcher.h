// Starts a command held at the door: the child is forked and waits until
// profcpu has opened its perf events (with enable_on_exec), then execs, so
// sampling starts exactly at the command's first instruction (as perf record
// does with its workload "cork").
#ifndef PROFCPU_COLLECTOR_COMMAND_LAUNCHER_H_
#define PROFCPU_COLLECTOR_COMMAND_LAUNCHER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace profcpu::collector {

class CommandLauncher {
 public:
  // Forks; the child blocks before exec. NotFound if the program is not on PATH.
  static absl::StatusOr<std::unique_ptr<CommandLauncher>> Prepare(
      const std::vector<std::string>& command);
  // Prepare, forking with `fork_process` instead of fork(2): lets a test
  // make the fork fail (and see that nothing leaks then).
  static absl::StatusOr<std::unique_ptr<CommandLauncher>> PrepareForTesting(
      const std::vector<std::string>& command, pid_t (*fork_process)());
  ~CommandLauncher();

  pid_t pid() const { return pid_; }
  // Lets the child exec. Fails with the exec error if it could not start,
  // naming the program: NotFound ("'x' not found ..."), PermissionDenied, ...
  absl::Status Start();
  // Non-blocking: true once the child has exited; sets its exit code
  // (128 + signal number if a signal killed it).
  bool Exited(int* exit_code);
  void Signal(int signal_number);

 private:
  CommandLauncher(pid_t pid, std::string program, base::UniqueFd go, base::UniqueFd exec_error)
      : pid_(pid), program_(std::move(program)), go_(std::move(go)),
        exec_error_(std::move(exec_error)) {}
  pid_t pid_;
  std::string program_;  // argv[0], for messages
  base::UniqueFd go_;          // write end: one byte releases the child
  base::UniqueFd exec_error_;  // read end: errno from a failed exec, EOF on success
  bool reaped_ = false;
};

// Where execvp would find `program` (a path, or a name searched in PATH):
// NotFound naming it when it is nowhere, PermissionDenied when what is there
// cannot be executed. Lets record fail before making a run folder.
absl::StatusOr<std::string> FindProgram(const std::string& program);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_COMMAND_LAUNCHER_H_
