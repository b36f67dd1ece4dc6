// Keeps the samples of a Profile a user asked to look at: some processes,
// threads or thread names, a time range (as a FlameScope selection), and
// without the idle loop. postprocess applies it before building outputs, so
// every output (flame graph, folded stacks, perf script, exports) agrees.
#ifndef PROFCPU_FOLD_PROFILE_FILTER_H_
#define PROFCPU_FOLD_PROFILE_FILTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "fold/profile.h"

namespace profcpu::fold {

struct ProfileFilter {
  std::vector<uint32_t> pids;       // keep only these processes; empty: all
  std::vector<uint32_t> tids;       // keep only these threads; empty: all
  std::vector<std::string> comms;   // keep only these thread names (exact); empty: all
  // Keep samples taken in [start_ns + from_s, start_ns + to_s).
  uint64_t start_ns = 0;
  std::optional<double> from_s;
  std::optional<double> to_s;
  // Drop samples whose innermost frame is the kernel's idle loop.
  bool no_idle = false;

  bool empty() const {
    return pids.empty() && tids.empty() && comms.empty() && !from_s && !to_s && !no_idle;
  }
};

struct ProfileFilterStats {
  uint64_t kept = 0;
  uint64_t dropped = 0;
};

// Whether `function` is one of the kernel's idle functions (perf's own list,
// tools/perf/util/symbol.c symbol__is_idle, and their newer names).
bool IsIdleFunction(absl::string_view function);

// Removes from `profile` the samples `filter` does not keep (stacks,
// locations and symbols stay; they cost nothing unreferenced).
ProfileFilterStats FilterProfile(const ProfileFilter& filter, Profile* profile);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PROFILE_FILTER_H_
