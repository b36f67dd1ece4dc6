// Replays a recording into a Profile: tracks address spaces and thread names,
// normalizes every sampled address, and lists the distinct code locations the
// symbolizer must name (one request per location, however many samples hit it).
#ifndef PROFCPU_FOLD_PROFILE_BUILDER_H_
#define PROFCPU_FOLD_PROFILE_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/stage_times.h"
#include "fold/profile.h"
#include "fold/recording_summary.h"
#include "recording/recording_reader.h"
#include "recording/records.h"
#include "symbolize/code_location.h"
#include "symbolize/jit_history.h"
#include "symbolize/stack_unwinder.h"
#include "symbolize/symbol_table.h"

namespace profcpu::fold {

// The replay's result: the samples' stacks of normalized locations (the
// Profile, without names yet), what the symbolizer must name, and the names
// the replay gave itself (the synthetic [on-cpu]/[off-cpu] frames).
struct BuiltProfile {
  Profile profile;
  RecordingSummary summary;
  std::vector<symbolize::Module> modules;
  std::vector<symbolize::SymbolRequest> requests;
  symbolize::SymbolTable known_names;
  // Set when the replay split across threads (profcpu.log's "parallel
  // replay:" line); else why it ran on one (empty when asked for one).
  std::optional<base::ParallelStage> parallel;
  std::string one_thread_reason;
};

// What the replay may ask of the symbolizer's side without opening a file
// itself (fold opens no file of the target).
struct BuildOptions {
  // Time-resolves JIT addresses into generations (CodeLocation::epoch):
  // told every mapping record, asked about every per-process address.
  symbolize::JitCodeHistory* jit = nullptr;
  // Unwinds -callgraph dwarf samples' user stacks. Without it such samples
  // keep only their sampled user IP (counted in dwarf_not_unwound).
  symbolize::UserStackUnwinder* unwinder = nullptr;
  // Threads the replay may use (base::WorkerThreads()); up to 2 replays on
  // one thread, in order (beside the reader's). The outputs are the same either way
  // (profile_builder_parallel.h says how).
  int threads = 1;
  // Samples per time slice of the parallel replay (tests make it small to
  // split a small recording). Small enough that the slices in the works
  // (threads + 2) hold little of a deep recording's records at once.
  size_t slice_samples = 4096;
};

absl::StatusOr<BuiltProfile> BuildProfile(recording::RecordingReader& reader,
                                          const BuildOptions& options = {});

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PROFILE_BUILDER_H_
