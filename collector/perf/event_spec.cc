#include "collector/perf/event_spec.h"

#include <linux/perf_event.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/file_io.h"

namespace profcpu::collector {
namespace {

struct KnownEvent {
  const char* name;
  uint32_t type;
  uint64_t config;
};

constexpr KnownEvent kKnownEvents[] = {
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
};

}  // namespace

absl::StatusOr<EventSpec> ParseEventName(absl::string_view name) {
  for (const KnownEvent& e : kKnownEvents) {
    if (name == e.name) {
      return EventSpec{e.name, e.type, e.config, e.type == PERF_TYPE_HARDWARE};
    }
  }
  std::vector<std::string> names;
  for (const KnownEvent& e : kKnownEvents) names.push_back(e.name);
  return absl::InvalidArgumentError(absl::StrCat("unknown event '", name, "'; known events: ",
                                                 absl::StrJoin(names, ", ")));
}

int KernelMaxSampleRate() {
  auto text = base::ReadFileBounded("/proc/sys/kernel/perf_event_max_sample_rate", 64);
  int value = 100000;
  if (text.ok()) (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &value);
  return value;
}

}  // namespace profcpu::collector
