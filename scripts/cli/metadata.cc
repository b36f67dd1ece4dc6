#include "scripts/cli/metadata.h"

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/time/time.h"
#include "collector/callgraph_choice.h"
#include "render/dotnet_event_stacks_json.h"
#include "render/dotnet_events_json.h"
#include "render/stack_ends_json.h"
#include "render/dotnet_runtimes_json.h"
#include "symbolize/dotnet_osr_repair.h"
#include "symbolize/modules_to_fetch.h"

namespace profcpu::cli {

std::string FormatMetadataJson(const RunFacts& facts) {
  const fold::RecordingSummary& s = *facts.summary;
  const recording::Header& h = s.header;
  nlohmann::ordered_json j;
  j["profcpu_version"] = h.profcpu_version;
  j["recording_format_version"] = h.format_version;
  j["target"] = h.target;
  j["command_line"] = h.command_line;
  j["host"] = {{"hostname", h.hostname},
               {"kernel_release", h.kernel_release},
               {"boot_id", h.boot_id},
               {"cpus", h.cpu_count}};
  nlohmann::ordered_json collection = {
      {"event", h.event_name},
      {h.frequency_mode ? "frequency_hz" : "period", h.sample_rate},
      {"callgraph", collector::CallgraphSpelling(h.callgraph, h.user_stack_size)},
      {"mode", s.mode},
      {"backend", h.backend.empty() ? "perf" : h.backend},
      {"clock", h.clock_id == 1 ? "CLOCK_MONOTONIC" : std::to_string(h.clock_id)},
      {"start_time", absl::FormatTime(absl::RFC3339_full, absl::FromUnixNanos(h.start_realtime_ns),
                                      absl::UTCTimeZone())},
      {"start_monotonic_ns", h.start_time_ns},
  };
  if (s.finish.has_value()) {
    collection["duration_seconds"] =
        static_cast<double>(s.finish->end_time_ns - h.start_time_ns) / 1e9;
    collection["stop_reason"] = s.finish->stop_reason;
  }
  // A recording without its Finish record was cut short (profcpu was killed
  // or the disk filled): everything up to the last flush is still here.
  collection["complete"] = s.finish.has_value() && !s.file_truncated;
  j["collection"] = collection;
  // With postprocess's filters, "total" is what the outputs hold; "recorded" all.
  j["samples"] = {{"total", s.samples_kept.value_or(s.samples)},
                  {"lost_ring_buffer", s.lost_ring_buffer},
                  {"lost_dropped_by_kernel", s.lost_dropped},
                  {"throttle_events", s.throttle_events},
                  {"first_sample_monotonic_ns", s.first_sample_ns},
                  {"last_sample_monotonic_ns", s.last_sample_ns}};
  if (s.samples_kept) j["samples"]["recorded"] = s.samples;
  // Every sample is present; these say how far their stacks reach.
  j["stacks"] = render::StackEndsJson(s);
  if (s.mode != "cpu" || h.backend == "bpf") {
    j["samples"]["weight"] = s.microseconds ? "microseconds" : s.weighted ? "samples" : "";
    j["samples"]["offcpu_events"] = s.offcpu_samples;
    j["samples"]["offcpu_seconds"] = static_cast<double>(s.offcpu_ns) / 1e9;
    j["samples"]["lost_bpf_ring_buffer"] = s.lost_bpf_ring_buffer;
    j["samples"]["lost_stacks"] = s.lost_stacks;
    j["samples"]["lost_bpf_map_full"] = s.lost_bpf_map_full;
    j["samples"]["lost_offcpu_unended"] = s.lost_offcpu_unended;
  }
  if (s.dwarf_stacks > 0) {
    // -callgraph dwarf: user stacks unwound after collection; "truncated":
    // unwinds that stopped early (their stacks are among stacks.cut_short).
    j["dwarf_unwinding"] = {{"stacks", s.dwarf_stacks},
                            {"truncated", s.dwarf_truncated},
                            {"not_unwound", s.dwarf_not_unwound},
                            {"user_stack_bytes", h.user_stack_size}};
  }
  if (h.callgraph == "fp+cfi") {
    // -callgraph fp+cfi: frame-pointer chains whose leaf was repaired from
    // a copy of the user stack (the callers a frameless leaf hides).
    j["leaf_repair"] = {{"stacks", s.leaf_repair_stacks},
                        {"repaired", s.leaf_repaired},
                        {"frames_added", s.leaf_frames_added},
                        {"user_stack_bytes", h.user_stack_size}};
    // .NET OSR frames' callers, found again in the same copy: every
    // outcome counted over all processes (dotnet_osr_repair.h).
    nlohmann::ordered_json osr = {{"stacks", 0}};
    for (size_t i = 1; i < symbolize::OsrRepairCounts{}.by_outcome.size(); ++i) {
      osr[symbolize::OsrRepairOutcomeName(static_cast<symbolize::OsrRepairOutcome>(i))] = 0;
    }
    for (const auto& [pid, counts] : s.dotnet_osr.by_pid) {
      osr["stacks"] = osr["stacks"].get<uint64_t>() + counts.samples_in_osr;
      for (size_t i = 1; i < counts.by_outcome.size(); ++i) {
        const char* name = symbolize::OsrRepairOutcomeName(static_cast<symbolize::OsrRepairOutcome>(i));
        osr[name] = osr[name].get<uint64_t>() + counts.by_outcome[i];
      }
    }
    osr["max_copy_bytes_used"] = s.dotnet_osr.max_copy_bytes_used;
    j["leaf_repair"]["dotnet_osr"] = osr;
  }
  const fold::UnknownFrames no_unknown_frames;
  const fold::UnknownFrames& unknown =
      facts.unknown_frames != nullptr ? *facts.unknown_frames : no_unknown_frames;
  if (facts.symbols != nullptr) {
    j["symbols"] = {{"distinct_locations", facts.symbols->requested},
                    {"resolved", facts.symbols->resolved},
                    {"unknown", facts.symbols->unknown},
                    {"unknown_frames_in_samples", unknown.total},
                    {"modules_with_debug_info", facts.symbols->with_debug_info},
                    {"retried_with_symbol_dirs", facts.symbols->retried}};
    // Where they are: every module, most frames first (an object keeps that order).
    nlohmann::ordered_json by_module = nlohmann::ordered_json::object();
    for (const auto& [module, count] : unknown.by_module) by_module[module] = count;
    j["symbols"]["unknown_frames_by_module"] = by_module;
    // The native ones with their build-ids: what `profcpu symbols` fetches.
    j["symbols"]["jit_frames_by_source"] = render::JitFrameSourcesJson(
        facts.jit_frame_sources != nullptr ? *facts.jit_frame_sources : fold::JitFrameSources{});
    j["symbols"]["unknown_native_modules"] =
        symbolize::ModulesToFetchJson(facts.unknown_modules != nullptr ? *facts.unknown_modules
                                                                       : std::vector<symbolize::ModuleToFetch>{});
  }
  if (facts.symbol_fetch != nullptr && !facts.symbol_fetch->empty()) {
    nlohmann::ordered_json fetched = nlohmann::ordered_json::array();
    for (const symbolize::ModuleFetchResult& r : *facts.symbol_fetch) {
      nlohmann::ordered_json tried = nlohmann::ordered_json::array();
      for (const symbolize::FetchAttempt& a : r.tried) {
        tried.push_back({{"server", a.server}, {"result", a.result}});
      }
      fetched.push_back({{"module", r.module.module},
                         {"build_id", absl::BytesToHexString(r.module.build_id)},
                         {"status", symbolize::FetchStatusName(r.status)},
                         {"source", r.source},
                         {"tried", tried}});
    }
    j["symbol_fetch"] = fetched;
  }
  nlohmann::ordered_json processes = nlohmann::ordered_json::array();
  for (const recording::ProcessInfo& p : s.processes) {
    processes.push_back({{"pid", p.pid},
                         {"namespace_pids", p.namespace_pids},
                         {"command_line", p.command_line}});
  }
  j["processes"] = processes;
  if (!s.dotnet_runtimes.empty()) {
    j["dotnet_runtimes"] = render::DotnetRuntimesJson(
        s.dotnet_runtimes,
        facts.jit_frame_sources != nullptr ? *facts.jit_frame_sources : fold::JitFrameSources{});
  }
  if (facts.dotnet_events != nullptr && !facts.dotnet_events->empty()) {
    nlohmann::ordered_json events = nlohmann::ordered_json::array();
    for (const auto& summary : *facts.dotnet_events) events.push_back(render::DotnetEventsJson(summary));
    j["dotnet_events"] = events;
  }
  if (facts.dotnet_event_stacks != nullptr && !facts.dotnet_event_stacks->profiles.empty()) {
    j["dotnet_event_stacks"] = render::DotnetEventStacksJson(*facts.dotnet_event_stacks);
  }
  j["warnings"] = facts.warnings;
  j["files"] = facts.files;
  // Names and command lines come from the target: never let invalid UTF-8
  // make the dump fail; replace it.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace profcpu::cli
