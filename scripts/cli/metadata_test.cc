#include "scripts/cli/metadata.h"

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"

namespace profcpu::cli {
namespace {

fold::RecordingSummary Summary() {
  fold::RecordingSummary s;
  s.header.target = "pid 42";
  s.header.event_name = "cpu-clock";
  s.header.frequency_mode = true;
  s.header.sample_rate = 99;
  s.header.callgraph = "fp";
  s.header.clock_id = 1;
  s.header.start_time_ns = 1'000'000'000;
  s.finish = recording::Finish{};
  s.finish->end_time_ns = 3'500'000'000;
  s.finish->stop_reason = "duration";
  s.samples = 500;
  s.lost_ring_buffer = 7;
  s.depth_limit_stacks = 2;
  s.stack_ends.samples = 500;
  s.stack_ends.cut_short = 30;
  s.stack_ends.cut_by_module = {{"/usr/lib/libcoreclr.so", 20}, {"[unknown]", 10}};
  recording::ProcessInfo process;
  process.pid = 42;
  process.namespace_pids = {42, 1};
  process.command_line = "dotnet app.dll";
  s.processes.push_back(process);
  return s;
}

nlohmann::json Parse(const RunFacts& facts) { return nlohmann::json::parse(FormatMetadataJson(facts)); }

TEST(MetadataTest, SaysWhatWasProfiledHowAndWhatWasLost) {
  const fold::RecordingSummary summary = Summary();
  RunFacts facts;
  facts.summary = &summary;
  facts.warnings = {"7 samples were lost"};
  facts.files = {"flamegraph.svg", "prof.tar.gz"};
  const nlohmann::json j = Parse(facts);
  EXPECT_EQ(j["target"], "pid 42");
  EXPECT_EQ(j["collection"]["frequency_hz"], 99);
  EXPECT_EQ(j["collection"]["clock"], "CLOCK_MONOTONIC");
  EXPECT_DOUBLE_EQ(j["collection"]["duration_seconds"].get<double>(), 2.5);
  EXPECT_EQ(j["collection"]["stop_reason"], "duration");
  EXPECT_EQ(j["collection"]["complete"], true);
  EXPECT_EQ(j["samples"]["total"], 500);
  EXPECT_FALSE(j["samples"].contains("recorded"));
  EXPECT_EQ(j["samples"]["lost_ring_buffer"], 7);
  // Stacks short of their thread's root are present, not lost.
  EXPECT_FALSE(j["samples"].contains("truncated_stacks"));
  EXPECT_EQ(j["stacks"]["cut_short"], 30);
  EXPECT_EQ(j["stacks"]["cut_short_by_module"]["/usr/lib/libcoreclr.so"], 20);
  EXPECT_EQ(j["stacks"]["cut_short_by_module"]["[unknown]"], 10);
  EXPECT_EQ(j["stacks"]["at_depth_limit"], 2);
  EXPECT_FALSE(j["stacks"].contains("repaired"));  // -callgraph fp: nothing repairs
  EXPECT_EQ(j["processes"][0]["command_line"], "dotnet app.dll");
  EXPECT_EQ(j["warnings"][0], "7 samples were lost");
  EXPECT_EQ(j["files"][1], "prof.tar.gz");
  // Only what the run had: no symbols given, no fetch, no .NET events.
  EXPECT_FALSE(j.contains("symbols"));
  EXPECT_FALSE(j.contains("symbol_fetch"));
  EXPECT_FALSE(j.contains("dotnet_events"));
  EXPECT_FALSE(j.contains("leaf_repair"));
  EXPECT_FALSE(j.contains("dotnet_runtimes"));
}

TEST(MetadataTest, SaysEachDotnetRuntimeAndHowItsFramesWereNamed) {
  fold::RecordingSummary summary = Summary();
  summary.header.callgraph = "fp+cfi";
  summary.header.user_stack_size = 512;
  recording::DotnetRuntime runtime;
  runtime.pid = 42;
  runtime.runtime_version = "10.0.12";
  runtime.perf_maps = "enabled_by_profcpu";
  runtime.events_bytes = 5000;
  runtime.events_dropped = {{"GCAllocationTick", 10, 900, 123}};
  summary.dotnet_runtimes.push_back(runtime);
  const fold::JitFrameSources sources = {{42, {{"jitdump", 30}, {"perf_map", 4}}}};
  const symbolize::SymbolizeStats stats;
  RunFacts facts;
  facts.summary = &summary;
  facts.symbols = &stats;
  facts.jit_frame_sources = &sources;
  const nlohmann::json j = Parse(facts);
  EXPECT_EQ(j["collection"]["callgraph"], "fp+cfi,512");
  const nlohmann::json& r = j["dotnet_runtimes"][0];
  EXPECT_EQ(r["pid"], 42);
  EXPECT_EQ(r["runtime_version"], "10.0.12");
  EXPECT_EQ(r["perf_maps"], "enabled_by_profcpu");
  EXPECT_EQ(r["frames_named_by"]["jitdump"], 30);
  EXPECT_EQ(r["frames_named_by"]["perf_map"], 4);
  EXPECT_EQ(r["frames_named_by"]["method_events"], 0);
  EXPECT_EQ(r["events"]["bytes_saved"], 5000);
  EXPECT_EQ(r["events"]["cut"], true);
  EXPECT_EQ(r["events"]["dropped"][0]["kind"], "GCAllocationTick");
  EXPECT_EQ(r["events"]["dropped"][0]["events"], 10);
  EXPECT_EQ(r["events"]["dropped"][0]["first_monotonic_ns"], 123);
  EXPECT_EQ(j["symbols"]["jit_frames_by_source"]["42"]["jitdump"], 30);
}

TEST(MetadataTest, FiltersKeepTheRecordedCountAndACutRecordingIsIncomplete) {
  fold::RecordingSummary summary = Summary();
  summary.samples_kept = 120;
  summary.finish.reset();
  RunFacts facts;
  facts.summary = &summary;
  const nlohmann::json j = Parse(facts);
  EXPECT_EQ(j["samples"]["total"], 120);
  EXPECT_EQ(j["samples"]["recorded"], 500);
  EXPECT_EQ(j["collection"]["complete"], false);
  EXPECT_FALSE(j["collection"].contains("duration_seconds"));
}

TEST(MetadataTest, UnknownFramesAndTheModulesToFetch) {
  const fold::RecordingSummary summary = Summary();
  symbolize::SymbolizeStats stats;
  stats.requested = 10;
  stats.resolved = 8;
  stats.unknown = 2;
  fold::UnknownFrames unknown;
  unknown.total = 30;
  unknown.by_module = {{"/usr/lib/libcoreclr.so", 25}, {"[JIT] tid 42", 5}};
  const std::vector<symbolize::ModuleToFetch> modules = {
      {"/usr/lib/libcoreclr.so", std::string("\xab\xcd", 2), 25}};
  symbolize::ModuleFetchResult fetched;
  fetched.module = modules[0];
  fetched.status = symbolize::ModuleFetchResult::Status::kNotFound;
  fetched.tried = {{"https://msdl.microsoft.com/download/symbols", "404"}};
  const std::vector<symbolize::ModuleFetchResult> fetch = {fetched};
  RunFacts facts;
  facts.summary = &summary;
  facts.symbols = &stats;
  facts.unknown_frames = &unknown;
  facts.unknown_modules = &modules;
  facts.symbol_fetch = &fetch;
  const nlohmann::json j = Parse(facts);
  EXPECT_EQ(j["symbols"]["distinct_locations"], 10);
  EXPECT_EQ(j["symbols"]["unknown_frames_in_samples"], 30);
  EXPECT_EQ(j["symbols"]["unknown_frames_by_module"]["/usr/lib/libcoreclr.so"], 25);
  EXPECT_EQ(j["symbols"]["unknown_native_modules"][0]["build_id"], "abcd");
  EXPECT_EQ(j["symbol_fetch"][0]["status"], "not_found");
  EXPECT_EQ(j["symbol_fetch"][0]["tried"][0]["result"], "404");
}

TEST(MetadataTest, InvalidUtf8FromTheTargetIsReplacedNotFatal) {
  fold::RecordingSummary summary = Summary();
  summary.processes[0].command_line = "bad \xff\xfe name";
  RunFacts facts;
  facts.summary = &summary;
  const nlohmann::json j = Parse(facts);
  EXPECT_NE(j["processes"][0]["command_line"].get<std::string>().find("bad "), std::string::npos);
}

}  // namespace
}  // namespace profcpu::cli
