// Turns a run folder's recording into its outputs: replay and normalize
// (fold::BuildProfile), name every distinct location once (symbolize, reusing
// the folder's symbol snapshot), then write folded stacks, perf script text
// and the flame graph. Shared by collect/record (right after sampling, with
// the target's files at hand) and postprocess (possibly on another machine).
#ifndef PROFCPU_SCRIPTS_CLI_PIPELINE_H_
#define PROFCPU_SCRIPTS_CLI_PIPELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fold/profile_builder.h"
#include "scripts/cli/unknown_frames.h"
#include "scripts/cli/run_log.h"
#include "scripts/cli/run_outputs.h"
#include "symbolize/symbolizer.h"

namespace profcpu::cli {

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
  // -format exports, the graph's look, -threads, postprocess's filters.
  RunOutputOptions outputs;
};

struct PipelineResult {
  fold::RecordingSummary summary;
  symbolize::SymbolizeStats symbols;
  UnknownFrames unknown_frames;
  // Processes with JIT/anonymous frames: whose perf maps are worth keeping.
  std::vector<uint32_t> jit_pids;
  // Copies of the processes' JIT files in the run folder (jit/...), relative
  // paths, for the archive.
  std::vector<std::string> jit_files;
  std::vector<std::string> files_written;
  // The -format exports written (also in files_written), for the archive.
  std::vector<std::string> exports;
};

absl::StatusOr<PipelineResult> RebuildOutputs(const PipelineOptions& options, RunLog* log);

// What was measured, for perf_script.out's header: the event and rate, and
// for BPF and off-CPU runs what the period field holds.
std::string ModeDescription(const fold::RecordingSummary& summary);

// This machine's boot id (kernel addresses are only meaningful within a boot).
std::string LocalBootId();

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_PIPELINE_H_
