// What a profiling run measures (-mode) and who samples on-CPU stacks
// (-backend), as the command line and the recording header spell them.
#ifndef PROFCPU_COLLECTOR_PROFILE_MODE_H_
#define PROFCPU_COLLECTOR_PROFILE_MODE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::collector {

enum class ProfileMode {
  kCpu,     // "cpu": on-CPU stacks, sampled
  kOffCpu,  // "offcpu": time blocked off the CPU, with the stacks it blocked in (BPF)
  kWall,    // "wall": both, weighed in time, rooted under [on-cpu] / [off-cpu]
};

enum class SamplingBackend {
  kPerf,  // "perf": every sample through perf ring buffers to user space
  kBpf,   // "bpf": a BPF program on the same perf events counts stacks in the kernel
};

absl::StatusOr<ProfileMode> ParseProfileMode(absl::string_view name);
absl::string_view ProfileModeName(ProfileMode mode);
absl::StatusOr<SamplingBackend> ParseSamplingBackend(absl::string_view name);
absl::string_view SamplingBackendName(SamplingBackend backend);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PROFILE_MODE_H_
