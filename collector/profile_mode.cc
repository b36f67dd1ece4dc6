#include "collector/profile_mode.h"

#include "absl/strings/str_cat.h"

namespace profcpu::collector {

absl::StatusOr<ProfileMode> ParseProfileMode(absl::string_view name) {
  if (name == "cpu") return ProfileMode::kCpu;
  if (name == "offcpu") return ProfileMode::kOffCpu;
  if (name == "wall") return ProfileMode::kWall;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown mode '", name, "'; modes: cpu, offcpu, wall"));
}

absl::string_view ProfileModeName(ProfileMode mode) {
  switch (mode) {
    case ProfileMode::kCpu:
      return "cpu";
    case ProfileMode::kOffCpu:
      return "offcpu";
    case ProfileMode::kWall:
      return "wall";
  }
  return "cpu";
}

absl::StatusOr<SamplingBackend> ParseSamplingBackend(absl::string_view name) {
  if (name == "perf") return SamplingBackend::kPerf;
  if (name == "bpf") return SamplingBackend::kBpf;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend '", name, "'; backends: perf, bpf"));
}

absl::string_view SamplingBackendName(SamplingBackend backend) {
  return backend == SamplingBackend::kBpf ? "bpf" : "perf";
}

}  // namespace profcpu::collector
