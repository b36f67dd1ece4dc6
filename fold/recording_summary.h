// What a recording's replay counted (fold::BuildProfile): its header, the
// samples and every loss with its reason, the mode. Said three ways here: the
// sampling described for perf_script.out's header and the pprof export, the
// perf script header itself, and the closing line a run prints.
#ifndef PROFCPU_FOLD_RECORDING_SUMMARY_H_
#define PROFCPU_FOLD_RECORDING_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fold/dotnet_osr_replay.h"
#include "fold/perf_script_writer.h"
#include "fold/stack_ends.h"
#include "fold/unknown_frames.h"
#include "recording/records.h"

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
  // Call chains the kernel (or the recording's own bound, or a BPF stack's
  // size) stopped at its depth limit: their leaf-most frames are kept.
  uint64_t depth_limit_stacks = 0;
  // -callgraph dwarf: samples with a user stack to unwind, how many of those
  // unwinds stopped before the outermost frame, and how many could not be
  // unwound at all (no unwinder: only their IP).
  uint64_t dwarf_stacks = 0;
  uint64_t dwarf_truncated = 0;
  uint64_t dwarf_not_unwound = 0;
  // -callgraph fp+cfi: chains whose leaf was given to the repair (samples
  // and off-CPU stays with a stack copy), how many gained frames, and how many frames.
  uint64_t leaf_repair_stacks = 0;
  uint64_t leaf_repaired = 0;
  uint64_t leaf_frames_added = 0;
  // -callgraph fp+cfi: chains that got frames back from their stack copy,
  // by the leaf repair, the .NET OSR repair or both (each chain once).
  uint64_t stacks_repaired = 0;
  // Stacks through .NET code entered by on-stack replacement, per process:
  // repaired from the copy (fp+cfi) or only counted (dotnet_osr_replay.h).
  DotnetOsrCounts dotnet_osr;
  uint64_t first_sample_ns = 0;
  uint64_t last_sample_ns = 0;
  std::vector<recording::ProcessInfo> processes;
  // What each .NET process's runtime told the collector (metadata.json's
  // "dotnet_runtimes"), in pid order.
  std::vector<recording::DotnetRuntime> dotnet_runtimes;
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
  // postprocess's filters (-pid, -comm, -from/-to...): of `samples`, those the
  // outputs hold, counted alike (ShapeProfile); absent without filters.
  std::optional<uint64_t> samples_kept;
  // Whether the stacks the outputs hold reach their thread's root
  // (stack_ends.h): counted once they are shaped and named, not by the replay.
  StackEnds stack_ends;
};

// What was measured: the event and rate, and for BPF and off-CPU runs what
// the period field holds ("cpu-clock, 99 Hz", "offcpu-time (sched_switch,
// BPF): period = microseconds ...").
std::string ModeDescription(const RecordingSummary& summary);

// perf_script.out's header: target, sampling, every loss counted (the BPF
// ones only where BPF took part), the stacks cut short and repaired (none
// of them lost: every sample is in the text), host and kernel.
PerfScriptHeader PerfScriptHeaderFor(const RecordingSummary& summary);

// One line for stderr and the log: samples (those the filters kept, of how
// many), losses, off-CPU time, stacks lost (BPF), stacks cut short and where
// they stopped, stacks repaired, unknown frames and where most are.
std::string SummaryLine(const RecordingSummary& summary, const UnknownFrames& unknown);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_RECORDING_SUMMARY_H_
