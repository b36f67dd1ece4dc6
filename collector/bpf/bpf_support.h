// Why BPF collection cannot run here, in terms of what to change. profcpu's
// BPF modes need: a kernel with BTF (/sys/kernel/btf/vmlinux, for CO-RE and
// tp_btf programs), Linux 5.8 or later (BPF ring buffer, CAP_BPF), and
// CAP_BPF plus CAP_PERFMON (or CAP_SYS_ADMIN) in profcpu's effective set.
// Without them each mode says which is missing and what to do; the perf
// backend (-mode cpu -backend perf) needs none of them.
#ifndef PROFCPU_COLLECTOR_BPF_BPF_SUPPORT_H_
#define PROFCPU_COLLECTOR_BPF_BPF_SUPPORT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace profcpu::collector {

struct BpfFacts {
  std::string kernel_release;  // uname -r
  int kernel_major = 0;
  int kernel_minor = 0;
  bool has_btf = false;        // /sys/kernel/btf/vmlinux is readable
  bool cap_bpf = false;        // effective capabilities
  bool cap_perfmon = false;
  bool cap_sys_admin = false;
  std::string lockdown;        // /sys/kernel/security/lockdown's selected mode, "" if unknown
};

// Reads the facts about this kernel and this process.
BpfFacts GatherBpfFacts();

// What stops `what` ("-mode offcpu", "-backend bpf") from running here, as a
// sentence ending in what to do; empty when nothing known does.
std::string BpfBlocker(const BpfFacts& facts, absl::string_view what);

// Explains a failure (errno `error`) of `step` ("load", "attach to
// sched_switch") once BpfBlocker found nothing: permission errors despite
// the capabilities point at seccomp or kernel lockdown.
std::string ExplainBpfFailure(const BpfFacts& facts, int error, absl::string_view step,
                              absl::string_view what);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_BPF_BPF_SUPPORT_H_
