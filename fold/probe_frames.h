// Drops the scheduler probe's own frames from the innermost end of off-CPU
// stacks, so they end where the thread slept (__schedule), as users read
// them. The BPF program skips the two frames that are always there (itself
// and bpf_trace_run<N>), but whether the tracepoint's iterator
// (__traceiter_sched_switch) sits between them and __schedule depends on
// how many probes the tracepoint has at that moment (one: a static call
// straight to the BPF stub; more, e.g. another tracer: the iterator). So the
// rest are recognised by name, once kernel frames are named.
#ifndef PROFCPU_FOLD_PROBE_FRAMES_H_
#define PROFCPU_FOLD_PROBE_FRAMES_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "fold/profile.h"

namespace profcpu::fold {

// Whether `function` is tracing machinery between a tracepoint and a BPF
// program: __traceiter_*, __bpf_trace_*, bpf_trace_run*, bpf_prog_*.
bool IsProbeFunction(absl::string_view function);

// For every sample whose stack is an off-CPU one (all samples when
// `all_off_cpu`; otherwise those rooted under the "[off-cpu]" frame of wall
// mode), drops innermost kernel frames named by IsProbeFunction. On-CPU
// samples are left alone: there such a frame is real time on the CPU.
// Returns how many samples changed.
uint64_t TrimProbeFrames(bool all_off_cpu, Profile* profile);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PROBE_FRAMES_H_
