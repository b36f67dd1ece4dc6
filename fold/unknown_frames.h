// Frames that stayed [unknown] in the samples, counted per module, so a run
// can say where names are missing (a stripped library without its debug
// file, JIT code without perf maps) instead of only how many.
#ifndef PROFCPU_FOLD_UNKNOWN_FRAMES_H_
#define PROFCPU_FOLD_UNKNOWN_FRAMES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/run_log.h"
#include "fold/profile.h"

namespace profcpu::fold {

struct UnknownFrames {
  uint64_t total = 0;  // frames of samples (one per sample and stack level)
  // (module, frames), most frames first, then by name. The module is what
  // the symbolizer recorded ("/usr/lib/libfoo.so", "//anon"), or "[unknown]"
  // for an address no mapping covered.
  std::vector<std::pair<std::string, uint64_t>> by_module;
  uint64_t samples = 0;  // samples looked at
  // The first module of by_module, in proportion: how many samples hold one
  // of its unknown frames, the most one sample holds, and whether every one
  // sits among the outermost frames of its stack (thread start-up code, such
  // as the thread-start frame of Debian's stripped libstdc++ in every thread).
  uint64_t top_samples = 0;
  uint64_t top_most_in_a_sample = 0;
  bool top_at_thread_start = false;
};

// How close to the root an unknown frame must be to count as thread start-up
// code: frames 0-2 from the outermost (clone3, start_thread, the thread
// routine's trampoline).
inline constexpr size_t kThreadStartDepth = 3;

UnknownFrames CountUnknownFrames(const Profile& profile);

// Where the unknown frames are, most first, and how to name a library's.
void LogUnknownFrames(const UnknownFrames& unknown, base::RunLog* log);

// ", 540 unknown frames" plus, when there are any, where most are and in what
// proportion: " (540 in libstdc++.so.6.0.30)", or for a library with one
// unnamed frame per sample " (one per sample, at thread start, all in
// libstdc++.so.6.0.30, which has no symbols here: profcpu.log says how to
// name it)" -- a known, harmless gap, not a failure.
std::string DescribeUnknownFrames(const UnknownFrames& unknown);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_UNKNOWN_FRAMES_H_
