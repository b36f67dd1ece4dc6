#include "scripts/cli/pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/stage_times.h"
#include "base/status_macros.h"
#include "fold/dotnet_event_profiles.h"
#include "fold/dotnet_event_stacks_of_run.h"
#include "fold/dotnet_osr_replay.h"
#include "fold/dotnet_runtime_events.h"
#include "fold/profile_builder.h"
#include "fold/profile_filter.h"
#include "fold/profile_shaping.h"
#include "fold/stack_ends.h"
#include "recording/recording_reader.h"
#include "recording/run_folder.h"
#include "render/dotnet_page_events.h"
#include "scripts/cli/version.h"
#include "symbolize/dotnet_code_names.h"
#include "symbolize/modules_to_fetch.h"
#include "symbolize/run_symbols.h"

namespace profcpu::cli {
namespace {

void LogReplay(const fold::BuiltProfile& built, base::RunLog* log) {
  const fold::RecordingSummary& summary = built.summary;
  if (summary.file_truncated) {
    log->Warn("the recording ends early (profcpu was stopped abruptly or the disk filled); "
              "using everything up to its last complete record");
  }
  log->Info(absl::StrCat("replayed ", summary.samples, " samples, ", built.requests.size(),
                         " distinct code locations, ", built.modules.size(), " modules"));
  if (built.parallel.has_value()) {
    log->Info(base::ParallelStageLine("replay", *built.parallel));
  } else if (!built.one_thread_reason.empty()) {
    log->Info(absl::StrCat("replay on one thread: ", built.one_thread_reason));
  }
  fold::LogDotnetOsr(summary.dotnet_osr, summary.header.callgraph == "fp+cfi", log);
}

// The frames of the samples kept that stayed [unknown], logged, and the
// native modules among them: what symbol servers are asked for; and the
// stacks that stop short of their thread's root (names decide that too).
void CountUnknown(const fold::Profile& profile, const std::vector<symbolize::Module>& modules,
                  base::RunLog* log, PipelineResult* result) {
  result->summary.stack_ends = fold::CountStackEnds(profile);
  result->unknown_frames = fold::CountUnknownFrames(profile);
  fold::LogUnknownFrames(result->unknown_frames, log);
  result->unknown_modules =
      symbolize::NativeModulesToFetch(result->unknown_frames.by_module, modules);
}

bool AnyFetched(const std::vector<symbolize::ModuleFetchResult>& fetched) {
  return std::any_of(fetched.begin(), fetched.end(), [](const auto& r) {
    return r.status == symbolize::ModuleFetchResult::Status::kFetched;
  });
}

}  // namespace

absl::StatusOr<PipelineResult> RebuildOutputs(const PipelineOptions& options, base::RunLog* log) {
  const std::string& dir = options.dir;
  PipelineResult result;
  base::StageTimes times;
  // Recording -> normalized stacks and the locations to name (fold's replay,
  // which asks symbolize for JIT generations and unwound DWARF stacks).
  PROFCPU_ASSIGN_OR_RETURN(auto reader, recording::RecordingReader::Open(
                                            absl::StrCat(dir, "/", recording::kRecordingFile)));
  symbolize::DotnetCodeNames dotnet_code(dir, log);
  symbolize::RunSymbols symbols(
      {dir, options.files, options.symbol_dirs, options.strip_tiers, &dotnet_code}, log);
  fold::BuildOptions build_options;
  build_options.jit = symbols.jit_history();
  build_options.unwinder = symbols.unwinder();
  build_options.threads = base::WorkerThreads();
  // Tests split small recordings into many slices to check the merge.
  if (const char* slice = std::getenv("PROFCPU_REPLAY_SLICE_SAMPLES"); slice != nullptr) {
    if (size_t n = 0; absl::SimpleAtoi(slice, &n) && n > 0) build_options.slice_samples = n;
  }
  PROFCPU_ASSIGN_OR_RETURN(fold::BuiltProfile built, fold::BuildProfile(*reader, build_options));
  const fold::RecordingSummary& summary = result.summary = built.summary;
  LogReplay(built, log);
  times.Done("replay");
  // Kept until the outputs are written (render reads them).
  fold::DotnetEventProfiles event_stacks =
      fold::ReadDotnetEventStacksOfRun(dir, symbols.jit_history(), &built, log);
  if (!event_stacks.profiles.empty()) times.Done(".NET event stacks");

  // -> a SymbolTable (symbols.bin written back) -> the named Profile.
  PROFCPU_ASSIGN_OR_RETURN(
      symbolize::ResolvedSymbols resolved,
      symbols.ResolveProfile({&built.requests, &built.modules, std::move(built.known_names),
                              summary.header.boot_id,
                              {summary.dwarf_stacks, summary.dwarf_truncated,
                               summary.dwarf_not_unwound}}));
  fold::Profile& profile = built.profile;
  event_stacks.SetSymbols(resolved.table);
  profile.SetSymbols(std::move(resolved.table));
  times.Done("symbols");
  fold::FilterDotnetEventProfiles(options.filter, summary, &event_stacks);

  // -> the profile shaped by mode and postprocess's filters (they read thread
  // names, times and kernel frames, which no fetched debug file renames).
  PROFCPU_RETURN_IF_ERROR(fold::ShapeProfile(&result.summary, options.filter, &profile, log).status());
  CountUnknown(profile, built.modules, log, &result);
  if (options.fetch.has_value() && !result.unknown_modules.empty()) {
    result.symbol_fetch = symbolize::FetchDebugFiles(result.unknown_modules, *options.fetch, log);
    if (AnyFetched(result.symbol_fetch)) {
      log->Info("naming frames again with the fetched debug files");
      PROFCPU_ASSIGN_OR_RETURN(resolved, symbols.ResolveAgainWith(options.fetch->cache_dir));
      event_stacks.SetSymbols(resolved.table);
      profile.SetSymbols(std::move(resolved.table));
      CountUnknown(profile, built.modules, log, &result);
      times.Done("fetched symbols");
    }
  }
  result.jit_frame_sources = fold::CountJitFrameSources(
      profile, [&symbols](const symbolize::CodeLocation& code) {
        return std::string(symbols.JitNameSourceOf(code));
      });
  result.symbols = std::move(resolved.stats);
  result.jit_files = std::move(resolved.jit_files);
  result.files_written.push_back(recording::kSymbolsFile);
  profile.SetModules(std::move(built.modules));

  // -> the outputs, with the .NET runtimes' events (dotnet/PID.nettrace) on
  // profile.html's time axis (never in perf_script.out, whose every record
  // readers count as a CPU sample).
  result.dotnet_events = fold::ReadDotnetEvents(dir, log);
  render::RunOutputsInput input;
  input.dir = dir;
  input.summary = &summary;
  input.profile = &profile;
  input.page_events = render::PageEventsOf(result.dotnet_events, summary.header.start_time_ns);
  input.generator = absl::StrCat("profcpu ", kProfcpuVersion);
  input.dotnet_event_profiles = &event_stacks;
  PROFCPU_ASSIGN_OR_RETURN(render::WrittenOutputs written,
                           render::WriteRunOutputs(input, options.outputs, &times, log));
  result.files_written.insert(result.files_written.end(), written.files.begin(),
                              written.files.end());
  result.exports = std::move(written.exports);
  // The counts outlive the outputs; the profiles themselves need not.
  for (fold::DotnetEventProfile& p : event_stacks.profiles) p.profile = fold::Profile();
  event_stacks.known_names = symbolize::SymbolTable();
  result.dotnet_event_stacks = std::move(event_stacks);
  log->Info(times.Summary());
  return result;
}

}  // namespace profcpu::cli
