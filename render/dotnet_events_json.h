// metadata.json's "dotnet_events" entry for one process: its runtime's GC,
// exceptions, contention, JIT and thread pool, as fold summarized them from
// dotnet/PID.nettrace (fold/dotnet_events_summary.h).
#ifndef PROFCPU_RENDER_DOTNET_EVENTS_JSON_H_
#define PROFCPU_RENDER_DOTNET_EVENTS_JSON_H_

#include <nlohmann/json.hpp>

#include "fold/dotnet_events_summary.h"

namespace profcpu::render {

nlohmann::ordered_json DotnetEventsJson(const fold::DotnetEventsSummary& summary);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_DOTNET_EVENTS_JSON_H_
