#include "collector/collection_target.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/errno_status.h"
#include "base/status_macros.h"
#include "collector/collection_text.h"
#include "collector/proc/container_resolver.h"
#include "collector/proc/proc_reader.h"

namespace profcpu::collector {
namespace {

bool Readable(int fd) {
  if (fd < 0) return false;
  pollfd p = {fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CollectionTarget>> CollectionTarget::Create(const TargetSpec& spec) {
  int kinds = (spec.pid > 0) + !spec.command.empty() + !spec.cgroup_dir.empty() +
              spec.all_processes;
  if (kinds != 1) {
    return absl::InvalidArgumentError(
        "give exactly one target: a pid, a command, a container, or all processes");
  }
  auto target = std::unique_ptr<CollectionTarget>(new CollectionTarget(spec));
  if (!spec.command.empty()) {
    PROFCPU_ASSIGN_OR_RETURN(target->launcher_, CommandLauncher::Prepare(spec.command));
  } else if (spec.pid > 0) {
    if (::kill(spec.pid, 0) != 0 && errno == ESRCH) {
      return absl::NotFoundError(absl::StrCat("no process with pid ", spec.pid));
    }
    // A thread id: its mappings, and so its user frames' names, are its
    // process's (the kernel's records carry the process's pid), and a pidfd
    // is only for a process. Profile the process.
    if (absl::StatusOr<pid_t> process = ReadThreadGroupId(spec.pid);
        process.ok() && *process != spec.pid) {
      target->given_thread_ = spec.pid;
      target->spec_.pid = *process;
    }
    target->pidfd_.Reset(static_cast<int>(::syscall(SYS_pidfd_open, target->spec_.pid, 0)));
  } else if (!spec.cgroup_dir.empty()) {
    target->cgroup_.Reset(::open(spec.cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!target->cgroup_.valid()) {
      return base::ErrnoStatus(errno, absl::StrCat("open cgroup ", spec.cgroup_dir));
    }
  }
  return target;
}

std::string CollectionTarget::Description() const {
  if (launcher_ != nullptr) return absl::StrCat("command: ", absl::StrJoin(spec_.command, " "));
  if (spec_.pid > 0) return DescribeProcessTarget(spec_.pid, given_thread_);
  if (!spec_.container_id.empty()) return absl::StrCat("container ", spec_.container_id);
  if (!spec_.cgroup_dir.empty()) return absl::StrCat("cgroup ", spec_.cgroup_dir);
  return "all processes";
}

pid_t CollectionTarget::main_pid() const {
  return launcher_ != nullptr ? launcher_->pid() : spec_.pid;
}

absl::Status CollectionTarget::Attach(Sampler* sampler) {
  if (launcher_ != nullptr || spec_.pid > 0) {
    absl::Status attached = sampler->AttachProcess(main_pid());
    if (absl::IsNotFound(attached) && launcher_ == nullptr) {
      return absl::NotFoundError(absl::StrCat("no process with pid ", spec_.pid));
    }
    return attached;
  }
  return sampler->AttachCpus(cgroup_.valid() ? cgroup_.get() : -1);
}

std::vector<pid_t> CollectionTarget::ExistingProcesses() const {
  if (launcher_ != nullptr) return {};
  if (spec_.pid > 0) return {spec_.pid};
  if (!spec_.cgroup_dir.empty()) return CgroupProcesses(spec_.cgroup_dir);
  return ListProcesses();
}

absl::Status CollectionTarget::Start() {
  return launcher_ != nullptr ? launcher_->Start() : absl::OkStatus();
}

std::optional<std::string> CollectionTarget::Ended(int* exit_code) {
  if (launcher_ != nullptr) {
    if (launcher_->Exited(exit_code)) return "target exited";
  } else if (spec_.pid > 0) {
    if (Readable(pidfd_.get())) return "target exited";
  } else if (!spec_.cgroup_dir.empty()) {
    if (!CgroupPopulated(spec_.cgroup_dir)) return "container exited";
  }
  return std::nullopt;
}

bool CollectionTarget::ForwardSignal(int signal_number) {
  if (launcher_ == nullptr) return false;
  launcher_->Signal(signal_number);
  return true;
}

}  // namespace profcpu::collector
