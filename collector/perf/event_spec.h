// The sampling events profcpu offers, by the names perf uses.
#ifndef PROFCPU_COLLECTOR_PERF_EVENT_SPEC_H_
#define PROFCPU_COLLECTOR_PERF_EVENT_SPEC_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::collector {

struct EventSpec {
  std::string name;
  uint32_t type = 0;    // perf_event_attr.type
  uint64_t config = 0;  // perf_event_attr.config
  bool hardware = false;
};

// "cpu-clock" (default; a software timer that works everywhere, including VMs
// without a PMU), "task-clock", "cycles", "instructions", ... Unknown names
// give InvalidArgument listing the names that are known.
absl::StatusOr<EventSpec> ParseEventName(absl::string_view name);

// The kernel's limit on -freq (kernel.perf_event_max_sample_rate), 100000
// when it cannot be read.
int KernelMaxSampleRate();

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PERF_EVENT_SPEC_H_
