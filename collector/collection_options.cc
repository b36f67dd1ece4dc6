#include "collector/collection_options.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "collector/perf_map_tailer.h"
#include "collector/profile_mode.h"

namespace profcpu::collector {

absl::Status ValidateCollectionOptions(const CollectionOptions& options) {
  const BpfCollectionOptions& profile = options.profile;
  if (options.sampler.dwarf_stack_size > 0 &&
      (profile.backend == SamplingBackend::kBpf || profile.mode != ProfileMode::kCpu)) {
    return absl::InvalidArgumentError(
        "-callgraph dwarf copies stacks with perf events: it goes with -backend perf and "
        "-mode cpu");
  }
  if (profile.timestamps && profile.backend != SamplingBackend::kBpf) {
    return absl::InvalidArgumentError(
        "-timestamps goes with -backend bpf (the perf backend always keeps timestamps)");
  }
  // Wall mode adds on-CPU samples to off-CPU time: their periods must be time.
  const std::string& event = options.sampler.event.name;
  if (profile.mode == ProfileMode::kWall && event != "cpu-clock" && event != "task-clock") {
    return absl::InvalidArgumentError(absl::StrCat(
        "-mode wall weighs on-CPU samples by their time, which '", event,
        "' does not count: use -event cpu-clock (the default) or task-clock"));
  }
  return absl::OkStatus();
}

uint64_t PerfMapCopyCapFromEnv() {
  const char* text = std::getenv("PROFCPU_PERF_MAP_MAX_BYTES");
  uint64_t bytes = 0;
  if (text == nullptr || !absl::SimpleAtoi(text, &bytes)) return 0;
  return bytes < PerfMapTailer::Limits().max_file_bytes ? bytes : 0;
}

uint64_t DotnetEventsCapFromEnv() {
  const char* text = std::getenv("PROFCPU_DOTNET_EVENTS_MAX_BYTES");
  uint64_t bytes = 0;
  if (text == nullptr || !absl::SimpleAtoi(text, &bytes)) return 0;
  return bytes < CollectionOptions().dotnet_events_max_bytes ? bytes : 0;
}

}  // namespace profcpu::collector
