#include "render/dotnet_events_json.h"

#include <string>

namespace profcpu::render {

nlohmann::ordered_json DotnetEventsJson(const fold::DotnetEventsSummary& s) {
  nlohmann::ordered_json by_reason = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : s.gc.by_reason) by_reason[reason] = n;
  nlohmann::ordered_json by_type = nlohmann::ordered_json::object();
  for (const auto& [type, n] : s.exceptions.by_type) by_type[type] = n;
  nlohmann::ordered_json j = {
      {"pid", s.pid},
      {"window_ms", s.window_ms},
      {"events", s.events},
      {"gc",
       {{"count", s.gc.count},
        {"induced", s.gc.induced},
        {"by_generation",
         {{"0", s.gc.by_generation[0]}, {"1", s.gc.by_generation[1]}, {"2", s.gc.by_generation[2]}}},
        {"by_reason", by_reason},
        {"pause_ms_total", s.gc.pause_ms_total},
        {"pause_ms_max", s.gc.pause_ms_max},
        {"heap_mb_after_last", s.gc.heap_mb_after_last}}},
      {"exceptions", {{"count", s.exceptions.count}, {"by_type", by_type}}},
      {"contention", {{"count", s.contention.count}, {"wait_ms_total", s.contention.wait_ms_total}}},
      {"jit", {{"methods", s.jit.methods}, {"ms_total", s.jit.ms_total}}},
      {"threadpool",
       {{"worker_threads_started", s.threadpool.worker_threads_started},
        {"worker_threads_stopped", s.threadpool.worker_threads_stopped},
        {"adjustments", s.threadpool.adjustments},
        {"starvation_adjustments", s.threadpool.starvation_adjustments},
        {"max_worker_threads", s.threadpool.max_worker_threads}}},
  };
  // A damaged or cut file: the counts are what was read before the error.
  if (!s.read_error.ok()) j["read_error"] = std::string(s.read_error.message());
  return j;
}

}  // namespace profcpu::render
