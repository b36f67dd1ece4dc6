#include "render/dotnet_runtimes_json.h"

#include <string>

namespace profcpu::render {
namespace {

// The sources in a fixed order, each present (0 when it named nothing), so
// readers need not test for keys.
nlohmann::ordered_json FramesBySource(const fold::JitFrameSources& frame_sources, uint32_t pid) {
  nlohmann::ordered_json out = {{"perf_map", 0}, {"jitdump", 0}, {"method_events", 0}};
  auto it = frame_sources.find(pid);
  if (it == frame_sources.end()) return out;
  for (const auto& [source, frames] : it->second) out[source] = frames;
  return out;
}

}  // namespace

nlohmann::ordered_json DotnetRuntimesJson(const std::vector<recording::DotnetRuntime>& runtimes,
                                          const fold::JitFrameSources& frame_sources) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const recording::DotnetRuntime& r : runtimes) {
    nlohmann::ordered_json dropped = nlohmann::ordered_json::array();
    uint64_t dropped_events = 0;
    for (const recording::DotnetRuntime::Dropped& d : r.events_dropped) {
      dropped.push_back({{"kind", d.kind},
                         {"events", d.count},
                         {"bytes", d.bytes},
                         {"first_monotonic_ns", d.first_ns}});
      dropped_events += d.count;
    }
    nlohmann::ordered_json entry = {
        {"pid", r.pid},
        {"runtime_version", r.runtime_version},
        {"perf_maps", r.perf_maps},
        {"perf_map_enabled_setting", r.perf_map_configured},
        {"frames_named_by", FramesBySource(frame_sources, r.pid)},
        {"events", {{"bytes_saved", r.events_bytes},
                    {"cut", dropped_events > 0},
                    {"dropped", dropped}}},
    };
    out.push_back(std::move(entry));
  }
  return out;
}

nlohmann::ordered_json JitFrameSourcesJson(const fold::JitFrameSources& frame_sources) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [pid, sources] : frame_sources) out[std::to_string(pid)] = FramesBySource(frame_sources, pid);
  return out;
}

}  // namespace profcpu::render
