#include "collector/perf/perf_event.h"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "collector/perf/permission_advice.h"

namespace profcpu::collector {
namespace {

int ReadIntSysctl(const char* path, int fallback) {
  auto text = base::ReadFileBounded(path, 64);
  int value = fallback;
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &value)) return fallback;
  return value;
}

}  // namespace

int PerfEventParanoid() { return ReadIntSysctl("/proc/sys/kernel/perf_event_paranoid", 2); }
int PerfEventMaxStack() { return ReadIntSysctl("/proc/sys/kernel/perf_event_max_stack", 127); }

absl::StatusOr<base::UniqueFd> OpenPerfEvent(const perf_event_attr& attr, pid_t tid, int cpu,
                                             const std::string& event_name, unsigned long flags) {
  long fd = ::syscall(SYS_perf_event_open, &attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC | flags);
  if (fd >= 0) return base::UniqueFd(static_cast<int>(fd));
  int err = errno;
  const bool cgroup = (flags & PERF_FLAG_PID_CGROUP) != 0;
  std::string where = absl::StrCat("perf_event_open(", event_name, ", ",
                                   cgroup ? "cgroup" : tid < 0 ? "all tasks" : "tid",
                                   tid < 0 || cgroup ? "" : absl::StrCat(" ", tid), ", cpu ", cpu,
                                   ")");
  switch (err) {
    case ESRCH:
      return absl::NotFoundError(absl::StrCat(where, ": no such thread"));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(absl::StrCat(
          where, ": ", std::strerror(err), ". ",
          PermissionAdvice(GatherPermissionFacts(cgroup ? -1 : tid, attr.exclude_kernel == 0))));
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return absl::UnimplementedError(absl::StrCat(
          where, ": event '", event_name, "' is not supported on this machine (",
          std::strerror(err), ")",
          attr.type == PERF_TYPE_HARDWARE
              ? "; there is no hardware PMU (common in VMs and containers): use -event cpu-clock"
              : ""));
    case EMFILE:
      return absl::ResourceExhaustedError(absl::StrCat(
          where, ": too many open files; raise the limit (ulimit -n) — profcpu needs one "
          "descriptor per thread per CPU"));
    case EINVAL:
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": invalid argument (the frequency may exceed "
          "kernel.perf_event_max_sample_rate, or the kernel lacks a feature profcpu needs)"));
    default:
      return base::ErrnoStatus(err, where);
  }
}

absl::Status RedirectOutput(int fd, int output_fd) {
  if (::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, output_fd) != 0) {
    return base::ErrnoStatus(errno, "PERF_EVENT_IOC_SET_OUTPUT");
  }
  return absl::OkStatus();
}

absl::Status EnableEvent(int fd) {
  if (::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    return base::ErrnoStatus(errno, "PERF_EVENT_IOC_ENABLE");
  }
  return absl::OkStatus();
}

absl::Status DisableEvent(int fd) {
  if (::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0) {
    return base::ErrnoStatus(errno, "PERF_EVENT_IOC_DISABLE");
  }
  return absl::OkStatus();
}

}  // namespace profcpu::collector
