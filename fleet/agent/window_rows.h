// One agent window's samples as the store's rows (fleet/store/schema.h):
// the samples counted per (second, process, stack), each stack and frame
// once, with stable ids (fleet/store/stable_id.h) so every agent that sees
// the same code writes the same ids. Frames are named as folded_stacks.out
// names them; a stack holds no comm root (comm is a label), so one stack id
// serves every process running that code.
#ifndef PROFCPU_FLEET_AGENT_WINDOW_ROWS_H_
#define PROFCPU_FLEET_AGENT_WINDOW_ROWS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fleet/agent/process_labels.h"
#include "fold/profile.h"

namespace profcpu::fleet {

struct FrameRow {
  uint64_t id = 0;
  std::string name;
  std::string module;    // a file name, "[kernel.kallsyms]" or "[jit]": never a pid's path
  std::string build_id;  // hex, native modules only
};

struct StackRow {
  uint64_t id = 0;
  std::vector<uint64_t> frame_ids;  // root first
};

struct SampleRow {
  uint32_t time = 0;  // UTC seconds
  uint32_t labels = 0;  // index into WindowRows::labels
  uint64_t stack_id = 0;
  uint64_t count = 0;
};

struct WindowRows {
  std::vector<ProcessLabels> labels;
  std::vector<SampleRow> samples;
  std::vector<StackRow> stacks;
  std::vector<FrameRow> frames;
  uint64_t total = 0;  // the sum of the samples' counts
};

struct WindowClock {
  // The recording's CLOCK_MONOTONIC start and the wall clock at that moment.
  uint64_t start_monotonic_ns = 0;
  int64_t start_realtime_ns = 0;
  // Counted samples (BPF) weigh their period, as folding does.
  bool weighted = false;
};

// `labels_of` gives a process's labels (its comm as the sample saw it is
// passed for processes gone by the time the window ends).
using LabelsOf = std::function<ProcessLabels(uint32_t pid, const std::string& comm)>;

// `profile` must be named (symbols set) and its modules set.
WindowRows BuildWindowRows(const fold::Profile& profile, const WindowClock& clock,
                           const LabelsOf& labels_of);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_WINDOW_ROWS_H_
