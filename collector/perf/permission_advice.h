// Explains a refused perf_event_open in terms of what to change: which
// capability profcpu lacks, which sysctl blocks it, or that a seccomp filter
// (a container's default profile) refused the call although the rights are there.
#ifndef PROFCPU_COLLECTOR_PERF_PERMISSION_ADVICE_H_
#define PROFCPU_COLLECTOR_PERF_PERMISSION_ADVICE_H_

#include <sys/types.h>

#include <string>

namespace profcpu::collector {

struct PermissionFacts {
  int paranoid = 2;            // kernel.perf_event_paranoid
  bool kernel_frames = true;   // the event samples kernel space
  bool has_perfmon = false;    // CAP_PERFMON or CAP_SYS_ADMIN in the effective set
  bool has_sys_ptrace = false;
  bool target_is_ours = true;  // same real uid as profcpu
  bool all_tasks = false;      // per-CPU events for every task or a cgroup
};

// Reads the facts for sampling `tid` (-1: every task, or a cgroup) from /proc
// and sysctls.
PermissionFacts GatherPermissionFacts(pid_t tid, bool kernel_frames);

// A sentence or two: what is missing and how to grant it.
std::string PermissionAdvice(const PermissionFacts& facts);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PERF_PERMISSION_ADVICE_H_
