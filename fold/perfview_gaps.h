// Why the PerfView export has samples of its own, and where they go.
//
// PerfView's reader of perf script text (TraceEvent's
// LinuxPerfScriptStackSource, BlockedTimeAnalyzer.DoMetrics) ignores the
// period field: it weighs each sample by the time to the next sample on the
// same CPU, and drops each CPU's last sample. perfcollect records every CPU,
// so the idle loop's samples bound every sample's time; a profile of some
// processes has gaps instead, and a sample taken just before its thread
// sleeps or leaves the CPU weighs the whole gap (issue 13: a 3% kernel
// function became 15.7% in PerfView). So the export closes every sample one
// spacing after it: a filler sample on the same CPU, unless that CPU's next
// sample comes first. Each profiled sample then weighs one spacing, as in
// folded_stacks.out it counts one, except where the CPU's next sample comes
// sooner (two profiled threads sharing a CPU): that gap is all it weighs.
#ifndef PROFCPU_FOLD_PERFVIEW_GAPS_H_
#define PROFCPU_FOLD_PERFVIEW_GAPS_H_

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fold/profile.h"
#include "recording/records.h"

namespace profcpu::fold {

// The time one sample stands for: 1/rate at a frequency, the period itself
// for the clock events (nanoseconds), else 1 ms (an event counted in cycles
// or instructions has no time; any constant weighs every sample the same).
uint64_t PerfViewSampleSpacingNs(const recording::Header& header);

struct GapFiller {
  uint64_t time_ns = 0;
  uint32_t cpu = 0;
  uint32_t event = 0;  // the closed sample's event (a string id)
};

// Fed the samples in time order, says which fillers go before each.
class PerfViewGaps {
 public:
  explicit PerfViewGaps(uint64_t spacing_ns) : spacing_ns_(spacing_ns) {}

  // The fillers due before `sample` (time <= its time), in time order, into
  // *due (cleared first); then opens `sample`'s own.
  void Before(const Sample& sample, std::vector<GapFiller>* due);
  // Every filler still open, in time order (after the last sample).
  void Finish(std::vector<GapFiller>* due);

 private:
  void TakeUntil(uint64_t time_ns, std::vector<GapFiller>* due);

  const uint64_t spacing_ns_;
  // The open fillers, at most one per CPU, in time order and by CPU.
  std::set<std::pair<uint64_t, uint32_t>> by_time_;  // (time, cpu)
  absl::flat_hash_map<uint32_t, GapFiller> by_cpu_;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PERFVIEW_GAPS_H_
