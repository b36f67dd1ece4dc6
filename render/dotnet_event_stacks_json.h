// metadata.json's "dotnet_event_stacks": per .NET event profile (allocations,
// lock waits, exceptions), its file, unit, events and weight, and what it
// could not count (events without a stack, waits without a length, events
// past the cap, events the collector's budget dropped), so a reader knows how
// complete alloc_stacks.out & co. are.
#ifndef PROFCPU_RENDER_DOTNET_EVENT_STACKS_JSON_H_
#define PROFCPU_RENDER_DOTNET_EVENT_STACKS_JSON_H_

#include <nlohmann/json.hpp>

#include "fold/dotnet_event_profiles.h"

namespace profcpu::render {

// An array, one object per profile; empty when no nettrace was read.
nlohmann::ordered_json DotnetEventStacksJson(const fold::DotnetEventProfiles& profiles);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_DOTNET_EVENT_STACKS_JSON_H_
