// The .NET runtime events summary and its timeline (fold/dotnet_events_summary.h:
// the page's events lane, perf_script.out's runtime events), read from a
// NetTrace file the profiled process wrote: hostile. A readable file always
// gives a summary; the timeline is bounded and in time order. The stream's
// own framing is nettrace_fuzzer's.
#include <cstddef>
#include <cstdint>

#include "fold/dotnet_events_summary.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace fold = profcpu::fold;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  profcpu::fuzz::MemFile file(profcpu::fuzz::AsText(data, size));
  fold::DotnetEventsSummary summary;
  Check(fold::SummarizeDotnetEvents(file.path(), 1, &summary).ok(),
        "a summary of a readable file failed");
  Check(summary.timeline.size() <= fold::kMaxTimelineEvents, "an unbounded timeline");
  Check(summary.timeline.size() <= size, "more timeline events than input bytes");
  for (size_t i = 1; i < summary.timeline.size(); ++i) {
    Check(summary.timeline[i - 1].start_ns <= summary.timeline[i].start_ns,
          "a timeline out of time order");
  }
  return 0;
}
