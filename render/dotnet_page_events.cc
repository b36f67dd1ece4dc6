#include "render/dotnet_page_events.h"

namespace profcpu::render {

std::vector<PageEvent> PageEventsOf(const fold::DotnetEventsOutput& events, uint64_t start_ns) {
  std::vector<PageEvent> out;
  for (const auto& [pid, e] : fold::MergedDotnetTimeline(events)) {
    if (e->start_ns < start_ns) continue;
    const bool gc = e->kind == fold::DotnetEventsSummary::TimelineEvent::Kind::kGcPause;
    out.push_back({static_cast<double>(e->start_ns - start_ns) / 1e9,
                   static_cast<double>(e->duration_ns) / 1e9, gc ? "gc" : "exception", pid,
                   e->label, e->thread_id});
  }
  return out;
}

}  // namespace profcpu::render
