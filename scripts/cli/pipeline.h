// Turns a run folder's recording into its outputs by calling one entry per
// stage, in order: fold's replay (normalized stacks + symbol requests),
// symbolize's RunSymbols (a SymbolTable, reusing and refreshing the folder's
// snapshot; with symbol servers, the debug files fetched for the modules left
// unknown name them again), fold's shaping, render's outputs. The recording
// is replayed once. Shared by collect/record (right after sampling, with the
// target's files at hand) and postprocess (possibly on another machine).
#ifndef PROFCPU_SCRIPTS_CLI_PIPELINE_H_
#define PROFCPU_SCRIPTS_CLI_PIPELINE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/run_log.h"
#include "fold/dotnet_event_profiles.h"
#include "fold/dotnet_runtime_events.h"
#include "fold/jit_frame_sources.h"
#include "fold/profile_filter.h"
#include "fold/recording_summary.h"
#include "fold/unknown_frames.h"
#include "render/run_outputs.h"
#include "symbolize/process_files.h"
#include "symbolize/symbol_fetcher.h"
#include "symbolize/symbolize_stats.h"

namespace profcpu::cli {

// Everything the flags of collect, record or postprocess ask of the outputs,
// parsed once into typed values.
struct PipelineOptions {
  std::string dir;
  // Where the profiled processes' files are; nullptr when they are not
  // reachable (postprocess elsewhere): the snapshot must do.
  const symbolize::ProcessFiles* files = nullptr;
  // -symbols DIR, in order: more places to find debug files (matched by
  // build-id or debuglink CRC); unknown native frames are looked up again.
  std::vector<std::string> symbol_dirs;
  // -strip-tiers: drop the .NET tier annotation ("[OptimizedTier1]") from
  // JIT frame names in the outputs (the snapshot keeps them).
  bool strip_tiers = false;
  // -format exports, the graph's look, -threads.
  render::RunOutputOptions outputs;
  // postprocess's filters (-pid, -tid, -comm, -from/-to, -no-idle).
  fold::ProfileFilter filter;
  // Debug files to fetch by build-id for modules left with unknown frames;
  // what arrives names them before any output is written.
  std::optional<symbolize::SymbolFetchOptions> fetch;
};

struct PipelineResult {
  fold::RecordingSummary summary;
  symbolize::SymbolizeStats symbols;
  fold::UnknownFrames unknown_frames;
  // The samples' named JIT frames, per process and source (perf map,
  // jitdump, the runtime's method events).
  fold::JitFrameSources jit_frame_sources;
  // Copies of the processes' JIT files in the run folder (jit/...), relative
  // paths, for the archive.
  std::vector<std::string> jit_files;
  std::vector<std::string> files_written;
  // The -format exports written (also in files_written), for the archive.
  std::vector<std::string> exports;
  // The .NET runtimes' saved events (dotnet/PID.nettrace), read once: their
  // timeline went into perf_script.out and profile.html, their summaries go
  // into metadata.json and the closing line (FinishRun).
  fold::DotnetEventsOutput dotnet_events;
  // The same streams' event stacks (allocations, lock waits, exceptions):
  // their counts per kind (events, weight, without a stack, ...), for
  // metadata and the closing line. The profiles themselves are emptied once
  // the outputs are written.
  fold::DotnetEventProfiles dotnet_event_stacks;
  // Native modules with frames left unknown, with their build-ids (what
  // `profcpu symbols` fetches), and what fetching found (with -fetch).
  std::vector<symbolize::ModuleToFetch> unknown_modules;
  std::vector<symbolize::ModuleFetchResult> symbol_fetch;
};

absl::StatusOr<PipelineResult> RebuildOutputs(const PipelineOptions& options, base::RunLog* log);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_PIPELINE_H_
