#include "fold/probe_frames.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "fold/profile_builder.h"

namespace profcpu::fold {
namespace {

// The innermost frame name of `location`, or "" when it has none.
absl::string_view FunctionOf(const Profile& profile, uint32_t location) {
  const symbolize::Symbolization* s = profile.symbols().Find(profile.location(location).code);
  return s == nullptr || s->frames.empty() ? absl::string_view() : s->frames.front().function;
}

}  // namespace

bool IsProbeFunction(absl::string_view function) {
  for (absl::string_view prefix : {"__traceiter_", "__bpf_trace_", "bpf_trace_run", "bpf_prog_"}) {
    if (absl::StartsWith(function, prefix)) return true;
  }
  return false;
}

uint64_t TrimProbeFrames(bool all_off_cpu, Profile* profile) {
  // Per stack id: the trimmed stack's id (itself when nothing is dropped).
  absl::flat_hash_map<uint32_t, uint32_t> trimmed;
  uint64_t changed = 0;
  for (Sample& sample : profile->mutable_samples()) {
    auto [it, inserted] = trimmed.try_emplace(sample.stack, sample.stack);
    if (inserted) {
      const std::vector<uint32_t>& stack = profile->stack(sample.stack);  // leaf first
      const bool off_cpu =
          all_off_cpu || (!stack.empty() && FunctionOf(*profile, stack.back()) == kOffCpuFrame);
      size_t drop = 0;
      while (off_cpu && drop < stack.size() && profile->location(stack[drop]).kernel &&
             IsProbeFunction(FunctionOf(*profile, stack[drop]))) {
        ++drop;
      }
      if (drop > 0) {
        // A copy: InternStack may grow the table `stack` lives in.
        std::vector<uint32_t> rest(stack.begin() + static_cast<std::ptrdiff_t>(drop), stack.end());
        it->second = profile->InternStack(rest);
      }
    }
    if (it->second != sample.stack) {
      sample.stack = it->second;
      ++changed;
    }
  }
  return changed;
}

}  // namespace profcpu::fold
