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
};

UnknownFrames CountUnknownFrames(const Profile& profile);

// Where the unknown frames are, most first, and how to name a library's.
void LogUnknownFrames(const UnknownFrames& unknown, base::RunLog* log);

// ", 540 unknown frames" plus, when there are any, where most are:
// " (540 in libstdc++.so.6.0.30)" (the module's file name).
std::string DescribeUnknownFrames(const UnknownFrames& unknown);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_UNKNOWN_FRAMES_H_
