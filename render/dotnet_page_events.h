// profile.html's events lane: the .NET runtimes' GC pauses and bursts of
// exceptions (fold/dotnet_runtime_events.h) on the page's time axis.
#ifndef PROFCPU_RENDER_DOTNET_PAGE_EVENTS_H_
#define PROFCPU_RENDER_DOTNET_PAGE_EVENTS_H_

#include <cstdint>
#include <vector>

#include "fold/dotnet_runtime_events.h"
#include "render/profile_page_writer.h"

namespace profcpu::render {

// Every process's timeline, in time order, in seconds from `start_ns` (time
// 0; earlier events are left out).
std::vector<PageEvent> PageEventsOf(const fold::DotnetEventsOutput& events, uint64_t start_ns);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_DOTNET_PAGE_EVENTS_H_
