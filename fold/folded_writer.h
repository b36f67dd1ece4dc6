// Folds a Profile into folded stacks (FoldedProfile) and prints them in the
// format of stackcollapse-perf.pl: "root;outermost;...;leaf count\n".
//
// Frames are named by the script's own rules (frame_name.h) applied to the
// very lines the perf script writer prints for each location
// (perf_script_format.h). So folding a Profile gives the same stacks as
// running stackcollapse-perf.pl (or StackCollapser) on its perf script text,
// with the same options; only the counts differ, since the script sums
// periods and FoldProfile counts samples unless `weight_by_period`. Where the
// script reads its own header line differently from this root frame (see
// FoldOptions), the root follows the documented rule instead.
#ifndef PROFCPU_FOLD_FOLDED_WRITER_H_
#define PROFCPU_FOLD_FOLDED_WRITER_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "base/stage_times.h"
#include "fold/folded_profile.h"
#include "fold/output_buffer.h"
#include "fold/profile.h"

namespace profcpu::fold {

struct FoldOptions {
  // Root frame "comm-PID" / "comm-PID/TID" (include_tid wins); the comm has
  // spaces turned into '_'. The script differs on odd headers: it reads a
  // TID of 0 as "no TID" (so "swapper-?"), takes a one-byte comm's following
  // space into it, and stops a comm at a space-delimited number.
  bool include_pid = false;
  bool include_tid = false;
  bool annotate_kernel = false;  // "_[k]" on frames of kernel modules
  bool annotate_jit = false;     // "_[j]" on frames of /tmp/perf-N.map
  bool include_addrs = false;    // "[module <address>]" for unnamed frames
  bool annotate_precompiled = false;  // "_[p]" on .NET [PreJIT] code (frame_name.h)
  bool keep_dotnet_tiers = false;     // "Main[OptimizedTier1]" (frame_name.h)
  bool keep_anonymous_namespaces = false;  // "(anonymous namespace)::f" frames (frame_name.h)
  // Keep only samples of this event; empty: the first sample's event, as the
  // script keeps the first event it meets (mixing events would mislead).
  std::string event_filter;
  // Count periods instead of samples, as stackcollapse-perf.pl 41fee1f does
  // (a period of 0 counts 1, as there).
  bool weight_by_period = false;
  // Threads FoldCounts may sort on (the order is the same on any number).
  int threads = 1;
};

// Whether a sample's event is the one folding keeps (options.event_filter,
// or the first sample's), by the name the perf script text shows (which is
// what the script compares).
class EventFilter {
 public:
  EventFilter(const Profile& profile, const FoldOptions& options);
  bool Keeps(uint32_t event);

 private:
  const Profile& profile_;
  std::string name_;
  absl::flat_hash_map<uint32_t, bool> keeps_;
};

FoldedProfile FoldProfile(const Profile& profile, const FoldOptions& options = {});

// FoldProfile in its two passes. The first, over every sample, sums weights
// per (thread name, pid, tid, stack) as `options` say (event filter, pid/tid
// roots, periods); the second names those stacks (over distinct stacks only)
// and merges the ones that name alike. Foldings that differ only in how
// frames are named (the annotations) can share one count: folded_stacks.out
// and the flame graph's annotated stacks walk the samples once.
struct StackKey {
  uint32_t comm;
  uint32_t pid;
  uint32_t tid;
  uint32_t stack;

  friend bool operator==(const StackKey& a, const StackKey& b) {
    return a.comm == b.comm && a.pid == b.pid && a.tid == b.tid && a.stack == b.stack;
  }
  template <typename H>
  friend H AbslHashValue(H h, const StackKey& k) {
    return H::combine(std::move(h), k.comm, k.pid, k.tid, k.stack);
  }
};
struct StackCounts {
  absl::flat_hash_map<StackKey, uint64_t> weights;
};
StackCounts CountStacks(const Profile& profile, const FoldOptions& options);
// `options` must count as the ones `counts` was made with; their naming
// options (annotations, addresses) may differ. `stage`, if given, receives
// what the sort's split spent (the naming's CPU counted as serial).
FoldedProfile FoldCounts(const Profile& profile, const StackCounts& counts,
                         const FoldOptions& options, base::ParallelStage* stage = nullptr);

// "frame;frame;... count\n" per stack, in the FoldedProfile's order. With
// `threads` > 1, runs of stacks are formatted side by side, a few at a time
// (the memory held is a few runs' text, not the file's), and handed to `out`
// in order: the same bytes. `stage`, if given, receives what that split
// spent, for profcpu.log.
absl::Status WriteFolded(const FoldedProfile& folded, OutputBuffer* out, int threads = 1,
                         base::ParallelStage* stage = nullptr);
std::string FormatFolded(const FoldedProfile& folded, int threads = 1);
// WriteFolded into a new file at `path`, streamed.
absl::Status WriteFoldedFile(const FoldedProfile& folded, const std::string& path,
                             int threads = 1, base::ParallelStage* stage = nullptr);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_FOLDED_WRITER_H_
