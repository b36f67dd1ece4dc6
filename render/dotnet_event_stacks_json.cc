#include "render/dotnet_event_stacks_json.h"

namespace profcpu::render {

nlohmann::ordered_json DotnetEventStacksJson(const fold::DotnetEventProfiles& profiles) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const fold::DotnetEventProfile& p : profiles.profiles) {
    nlohmann::ordered_json j;
    j["kind"] = fold::DotnetEventKindName(p.kind);
    // Written only with samples (render/dotnet_event_outputs.h).
    j["file"] = p.events > 0 ? fold::DotnetEventStacksFile(p.kind) : "";
    j["unit"] = fold::DotnetEventUnit(p.kind);
    j["events"] = p.events;
    j["weight"] = p.weight;
    j["no_stack"] = p.no_stack;
    j["unpaired"] = p.unpaired;
    j["over_limit"] = p.over_limit;
    j["dropped"] = p.dropped;
    all.push_back(std::move(j));
  }
  return all;
}

}  // namespace profcpu::render
