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
#include "collector/recording/recording_reader.h"
#include "collector/recording/records.h"
#include "fold/profile.h"
#include "symbolize/code_location.h"
#include "symbolize/jit_history.h"
#include "symbolize/stack_unwinder.h"
#include "symbolize/symbolizer.h"

namespace profcpu::fold {

// The frames -mode wall roots every stack under, just below the comm.
inline constexpr char kOnCpuFrame[] = "[on-cpu]";
inline constexpr char kOffCpuFrame[] = "[off-cpu]";

struct RecordingSummary {
  recording::Header header;
  std::optional<recording::Finish> finish;  // absent if the collector did not finish
  bool file_truncated = false;              // the file ends mid-record
  uint64_t samples = 0;
  uint64_t lost_ring_buffer = 0;  // samples/records the kernel could not queue
  uint64_t lost_dropped = 0;      // samples the kernel dropped (LOST_SAMPLES)
  uint64_t throttle_events = 0;
  uint64_t truncated_stacks = 0;  // call chains cut at the kernel's depth limit
                                  // or DWARF unwinds that stopped early
  // -callgraph dwarf: samples with a user stack to unwind, how many of those
  // unwinds stopped before the outermost frame (also in truncated_stacks),
  // and how many could not be unwound at all (no unwinder: only their IP).
  uint64_t dwarf_stacks = 0;
  uint64_t dwarf_truncated = 0;
  uint64_t dwarf_not_unwound = 0;
  uint64_t first_sample_ns = 0;
  uint64_t last_sample_ns = 0;
  std::vector<recording::ProcessInfo> processes;
  // Off-CPU and BPF collection (docs/recording-format.md, types 10-12).
  std::string mode = "cpu";       // header's mode: "cpu", "offcpu" or "wall"
  // Sample periods are the weights to fold by: samples counted in the kernel
  // (BPF backend), or microseconds (offcpu and wall modes).
  bool weighted = false;
  bool microseconds = false;      // the weights are microseconds of time
  uint64_t offcpu_samples = 0;
  uint64_t offcpu_ns = 0;
  uint64_t lost_bpf_ring_buffer = 0;
  uint64_t lost_stacks = 0;       // stack map full or collision (BPF)
  uint64_t lost_bpf_map_full = 0;
  uint64_t lost_offcpu_unended = 0;  // stays whose end went unreported
  uint64_t missing_stacks = 0;    // records naming a stack the recording lacks
};

struct BuiltProfile {
  Profile profile;
  RecordingSummary summary;
  std::vector<symbolize::Module> modules;
  std::vector<symbolize::SymbolRequest> requests;
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
};

absl::StatusOr<BuiltProfile> BuildProfile(recording::RecordingReader& reader,
                                          const BuildOptions& options = {});

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PROFILE_BUILDER_H_
