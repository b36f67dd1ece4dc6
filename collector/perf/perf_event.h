// One perf_event_open(2) file descriptor, and the translation of its failures
// into messages a user can act on (which capability or sysctl is missing,
// which event this machine lacks).
#ifndef PROFCPU_COLLECTOR_PERF_PERF_EVENT_H_
#define PROFCPU_COLLECTOR_PERF_PERF_EVENT_H_

#include <linux/perf_event.h>
#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace profcpu::collector {

// Opens an event on `tid` (-1 for all; a cgroup directory fd with
// PERF_FLAG_PID_CGROUP in `flags`) and `cpu` (-1 for any). Errors: NotFound
// when the thread is gone, PermissionDenied naming what is missing,
// Unimplemented when the event does not exist here.
absl::StatusOr<base::UniqueFd> OpenPerfEvent(const perf_event_attr& attr, pid_t tid, int cpu,
                                             const std::string& event_name,
                                             unsigned long flags = 0);

// Sends all records of `fd` to the ring buffer of `output_fd` (same CPU).
absl::Status RedirectOutput(int fd, int output_fd);

absl::Status EnableEvent(int fd);
absl::Status DisableEvent(int fd);

// /proc/sys/kernel/perf_event_paranoid, or 2 (the kernel default) if unreadable.
int PerfEventParanoid();

// /proc/sys/kernel/perf_event_max_stack, or 127 (the kernel default).
int PerfEventMaxStack();

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PERF_PERF_EVENT_H_
