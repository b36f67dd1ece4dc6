#include "scripts/cli/pipeline.h"

#include <time.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "base/status_macros.h"
#include "fold/dotnet_runtime_events.h"
#include "fold/folded_writer.h"
#include "fold/perf_script_writer.h"
#include "fold/profile_builder.h"
#include "fold/profile_shaping.h"
#include "recording/recording_reader.h"
#include "render/flamegraph.h"
#include "render/run_graph.h"
#include "render/profile_page_writer.h"
#include "scripts/cli/output_dir.h"
#include "scripts/cli/profile_page_output.h"
#include "symbolize/dotnet_code_names.h"
#include "symbolize/run_symbols.h"

namespace profcpu::cli {

namespace {

// Seconds spent per stage, for profcpu.log: what the user waited for after
// the collection (or postprocess) and where it went.
class StageTimes {
 public:
  StageTimes() : start_(Now()), last_(start_) {}
  void Done(absl::string_view stage) {
    double now = Now();
    absl::StrAppend(&text_, text_.empty() ? "" : ", ", stage, " ",
                    absl::SixDigits(now - last_));
    last_ = now;
  }
  std::string Summary() const {
    return absl::StrCat("outputs built in ", absl::SixDigits(Now() - start_), " s (", text_, ")");
  }

 private:
  static double Now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  double start_;
  double last_;
  std::string text_;
};

// The native modules among those with unknown frames, with their build-ids,
// most unknown frames first.
std::vector<symbolize::ModuleToFetch> UnknownNativeModules(const fold::UnknownFrames& unknown,
                                                           const fold::Profile& profile) {
  absl::flat_hash_map<absl::string_view, const symbolize::Module*> by_path;
  for (const symbolize::Module& module : profile.modules()) {
    by_path.try_emplace(module.path, &module);
  }
  std::vector<symbolize::ModuleToFetch> out;
  for (const auto& [path, frames] : unknown.by_module) {
    auto it = by_path.find(path);
    if (it == by_path.end()) continue;  // JIT code, anonymous memory, no mapping
    out.push_back({path, it->second->build_id, frames});
  }
  return out;
}

// Runs a writer on a thread of its own; Wait() (or leaving the scope, on an
// early return) joins it.
class ParallelWrite {
 public:
  explicit ParallelWrite(std::function<absl::Status()> write)
      : thread_([this, write = std::move(write)] { status_ = write(); }) {}
  ~ParallelWrite() {
    if (thread_.joinable()) thread_.join();
  }
  absl::Status Wait() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }

 private:
  absl::Status status_;
  std::thread thread_;
};

absl::StatusOr<PipelineResult> BuildOutputsOnce(const PipelineOptions& options,
                                                base::RunLog* log) {
  const std::string& dir = options.dir;
  auto path = [&dir](const char* name) { return absl::StrCat(dir, "/", name); };
  PipelineResult result;
  StageTimes times;
  // Recording -> normalized stacks and the locations to name (fold's replay,
  // which asks symbolize for JIT generations and unwound DWARF stacks).
  PROFCPU_ASSIGN_OR_RETURN(auto reader, recording::RecordingReader::Open(path(kRecordingFile)));
  symbolize::DotnetCodeNames dotnet_code(dir, log);
  symbolize::RunSymbols symbols(
      {dir, options.files, options.symbol_dirs, options.strip_tiers, &dotnet_code}, log);
  PROFCPU_ASSIGN_OR_RETURN(fold::BuiltProfile built,
                           fold::BuildProfile(*reader, {symbols.jit_history(), symbols.unwinder()}));
  const fold::RecordingSummary& summary = result.summary = built.summary;
  if (summary.file_truncated) {
    log->Warn("the recording ends early (profcpu was stopped abruptly or the disk filled); "
              "using everything up to its last complete record");
  }
  times.Done("replay");
  log->Info(absl::StrCat("replayed ", summary.samples, " samples, ", built.requests.size(),
                         " distinct code locations, ", built.modules.size(), " modules"));
  fold::LogDotnetOsr(summary.dotnet_osr, summary.header.callgraph == "fp+cfi", log);

  // -> a SymbolTable (symbols.bin written back) -> the named Profile.
  PROFCPU_ASSIGN_OR_RETURN(
      symbolize::ResolvedSymbols resolved,
      symbols.ResolveProfile({&built.requests, &built.modules, std::move(built.known_names),
                              summary.header.boot_id,
                              {summary.dwarf_stacks, summary.dwarf_truncated,
                               summary.dwarf_not_unwound}}));
  result.symbols = std::move(resolved.stats);
  result.jit_files = std::move(resolved.jit_files);
  result.files_written.push_back(kSymbolsFile);
  times.Done("symbols");
  fold::Profile& profile = built.profile;
  profile.SetSymbols(std::move(resolved.table));
  profile.SetModules(std::move(built.modules));

  // -> the outputs, from the profile shaped by mode and postprocess's filters.
  PROFCPU_RETURN_IF_ERROR(
      fold::ShapeProfile(&result.summary, options.outputs.filter, &profile, log).status());
  result.unknown_frames = fold::CountUnknownFrames(profile);  // of the samples kept
  fold::LogUnknownFrames(result.unknown_frames, log);
  result.unknown_modules = UnknownNativeModules(result.unknown_frames, profile);
  fold::FoldOptions fold_options;
  fold_options.weight_by_period = summary.weighted;  // BPF counts, off-CPU time
  fold_options.include_tid = options.outputs.threads;
  // Tiers and anonymous-namespace functions stay in profcpu's own outputs
  // (-strip-tiers took tiers out of the names already); `profcpu fold` keeps
  // stackcollapse-perf.pl's tidying.
  fold_options.keep_dotnet_tiers = fold_options.keep_anonymous_namespaces = true;
  // The .NET runtimes' events (dotnet/PID.nettrace): their GC pauses and
  // exceptions go on the time axis of perf_script.out and profile.html.
  result.dotnet_events = fold::ReadDotnetEvents(dir, log);
  fold::PerfScriptWriteOptions script_options;
  script_options.header = fold::PerfScriptHeaderFor(summary);
  script_options.events = fold::PerfScriptEventsOf(result.dotnet_events);
  // The outputs read the Profile only, so they are written side by side:
  // perf_script.out (the largest by far) and profile.html (its data is
  // deflated) each on a thread of their own, the folded stacks and the
  // graph here.
  ParallelWrite script_writer([&] {
    return fold::WritePerfScriptFile(profile, script_options, path(kPerfScriptFile));
  });
  render::FlameGraphOptions graph =
      render::DefaultGraphOptions(summary.mode, summary.microseconds, summary.header.target);
  PROFCPU_RETURN_IF_ERROR(ApplyGraphFlags(options.outputs, &graph));
  // Palettes that colour by annotation need the stacks folded with them.
  const fold::FoldOptions graph_fold = render::GraphFoldOptions(fold_options, graph.palette);
  std::optional<ParallelWrite> page_writer;
  if (options.outputs.html) {
    page_writer.emplace([&] {
      return WriteProfilePage(profile, {&summary, graph_fold, graph, 0, &result.dotnet_events},
                              path(render::kProfilePageFile));
    });
  }

  // One pass over the samples serves folded_stacks.out and the graph's stacks.
  const fold::StackCounts counts = fold::CountStacks(profile, fold_options);
  const fold::FoldedProfile folded = fold::FoldCounts(profile, counts, fold_options);
  PROFCPU_RETURN_IF_ERROR(fold::WriteFoldedFile(folded, path(kFoldedFile)));
  times.Done("folded");
  std::optional<fold::FoldedProfile> annotated;
  if (graph_fold.annotate_kernel) annotated = fold::FoldCounts(profile, counts, graph_fold);
  PROFCPU_ASSIGN_OR_RETURN(std::string svg,
                           render::RenderFlameGraph(annotated ? *annotated : folded, graph));
  PROFCPU_RETURN_IF_ERROR(base::WriteFile(path(kFlameGraphFile), svg));
  times.Done("svg");
  for (const char* name : {kFoldedFile, kPerfScriptFile, kFlameGraphFile}) {
    result.files_written.push_back(name);
  }
  // What the other two took beyond the folded stacks and the graph:
  if (page_writer.has_value()) {
    PROFCPU_RETURN_IF_ERROR(page_writer->Wait());
    result.files_written.push_back(render::kProfilePageFile);
    times.Done("html wait");
  }
  PROFCPU_RETURN_IF_ERROR(script_writer.Wait());
  times.Done("perf_script wait");

  PROFCPU_RETURN_IF_ERROR(WriteExports(options.outputs, dir, summary, profile,
                                       script_options.events, log,
                                       &result.exports));
  result.files_written.insert(result.files_written.end(), result.exports.begin(),
                              result.exports.end());
  times.Done("exports");
  log->Info(times.Summary());
  return result;
}

}  // namespace

absl::StatusOr<PipelineResult> RebuildOutputs(const PipelineOptions& options, base::RunLog* log) {
  PROFCPU_ASSIGN_OR_RETURN(PipelineResult result, BuildOutputsOnce(options, log));
  if (!options.fetch.has_value() || result.unknown_modules.empty()) return result;
  std::vector<symbolize::ModuleFetchResult> fetched =
      symbolize::FetchDebugFiles(result.unknown_modules, *options.fetch, log);
  const bool arrived = std::any_of(fetched.begin(), fetched.end(), [](const auto& r) {
    return r.status == symbolize::ModuleFetchResult::Status::kFetched;
  });
  if (arrived) {
    // Once more, with the cache among the symbol directories (it may not
    // have existed before).
    PipelineOptions again = options;
    again.fetch.reset();
    if (std::find(again.symbol_dirs.begin(), again.symbol_dirs.end(), options.fetch->cache_dir) ==
        again.symbol_dirs.end()) {
      again.symbol_dirs.push_back(options.fetch->cache_dir);
    }
    log->Info("naming frames again with the fetched debug files");
    PROFCPU_ASSIGN_OR_RETURN(result, BuildOutputsOnce(again, log));
  }
  result.symbol_fetch = std::move(fetched);
  return result;
}

}  // namespace profcpu::cli
