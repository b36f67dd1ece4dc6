// Folds perf script text into folded stacks, byte-identical to
// stackcollapse-perf.pl at FlameGraph commit 41fee1f (the version profcpu's
// users had), for its options --pid, --tid, --kernel, --jit, --all, --addrs and
// --event-filter. Like that version it sums the period field when perf script
// prints one (a sample without one counts 1), and keeps only the samples of
// the first event type it meets unless told which event to keep.
//
// Not provided: --inline, --context (they run addr2line on the target's
// files) and --srcline (it consumes the line after every frame).
#ifndef PROFCPU_FOLD_STACKCOLLAPSE_H_
#define PROFCPU_FOLD_STACKCOLLAPSE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "fold/frame_name.h"
#include "fold/line_reader.h"
#include "fold/output_buffer.h"
#include "fold/perf_script_reader.h"
#include "fold/perl_count.h"

namespace profcpu::fold {

struct StackCollapseOptions {
  bool include_pid = false;      // --pid: root "comm-PID"
  bool include_tid = false;      // --tid: root "comm-PID/TID"
  bool annotate_kernel = false;  // --kernel (--all sets both annotations)
  bool annotate_jit = false;     // --jit
  bool include_addrs = false;    // --addrs
  bool annotate_precompiled = false;  // profcpu's --prejit: "_[p]" (frame_name.h)
  std::string event_filter;      // --event-filter; empty: the first event seen
  // Memory bound for hostile input (a "sample" that never ends): frames past
  // this many bytes of names are dropped and counted. Real stacks stay far
  // below it; the script itself has no bound.
  size_t max_stack_bytes = size_t{64} << 20;
};

struct StackCollapseStats {
  uint64_t lines = 0;
  uint64_t samples = 0;             // stacks counted
  uint64_t filtered_headers = 0;    // sample headers of another event, skipped
  uint64_t unrecognized_lines = 0;  // lines the script warns about
  uint64_t overlong_lines = 0;      // lines over the reader's limit, skipped
  uint64_t truncated_stacks = 0;    // samples over max_stack_bytes
  // When the filter was defaulted and other events were met: the script's
  // "Filtering for events of type: X" warning names the first other event.
  std::string warned_event;
};

class StackCollapser {
 public:
  explicit StackCollapser(StackCollapseOptions options);

  // Feeds one line, without its '\n'.
  void AddLine(absl::string_view line);

  // Writes "frame;frame;... count\n" lines sorted bytewise, as the script does.
  void Write(OutputBuffer* out) const;
  std::string Format() const;
  // The stacks with their counts, sorted as Write() prints them.
  std::vector<std::pair<absl::string_view, const PerlCount*>> SortedStacks() const;

  size_t stack_count() const { return counts_.size(); }
  // The event kept ("" until a header names one).
  const std::string& event_filter() const { return event_filter_; }
  const StackCollapseStats& stats() const { return stats_; }
  StackCollapseStats& mutable_stats() { return stats_; }

 private:
  void OnHeader(const HeaderLine& header);
  void EndSample();

  StackCollapseOptions options_;
  FrameNamer namer_;
  std::string event_filter_;
  bool event_defaulted_ = false;

  // The sample being read.
  bool has_root_ = false;
  bool java_ = false;
  std::string root_;
  std::string period_;
  std::string names_;  // each frame line's names, in input (leaf-first) order
  std::vector<std::pair<size_t, size_t>> segments_;  // offset, size in names_
  bool truncated_ = false;
  std::string key_;

  absl::flat_hash_map<std::string, PerlCount> counts_;
  StackCollapseStats stats_;
};

// Folds every line of `reader` and writes the result to `out`. Fills `stats`
// if given. Fails only on a read or write error.
absl::Status CollapsePerfScript(LineReader& reader, const StackCollapseOptions& options,
                                OutputBuffer* out, StackCollapseStats* stats = nullptr);

// Folds `text` and returns the folded output.
std::string CollapsePerfScriptText(absl::string_view text, const StackCollapseOptions& options);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_STACKCOLLAPSE_H_
