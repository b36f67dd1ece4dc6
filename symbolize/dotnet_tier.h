// The tier annotation CoreCLR appends to a JIT'd method's name in perf maps
// and jitdumps ("App.Calc::Sum(int32)[OptimizedTier1]"; on by default,
// DOTNET_PerfMapShowOptimizationTiers). Header-only: the symbolizer strips it
// on request (-strip-tiers, dotnet_names.h) and fold keeps it in frame names
// that its argument-list tidying would otherwise cut away (frame_name.h).
#ifndef PROFCPU_SYMBOLIZE_DOTNET_TIER_H_
#define PROFCPU_SYMBOLIZE_DOTNET_TIER_H_

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace profcpu::symbolize {

// CoreCLR's tier names (vm/prestub.cpp, PrepareCodeConfig::GetJitOptimizationTierStr)
// and the tags of precompiled code ([PreJIT] in perf maps and jitdumps).
inline constexpr absl::string_view kDotnetTiers[] = {
    "Unknown",          "MinOptJitted",      "Optimized",        "QuickJitted",
    "OptimizedTier1",   "OptimizedTier1OSR", "InstrumentedTier", "InstrumentedTierOptimized",
    "PreJIT",           "ReadyToRun",
};

// The tier annotation of `name` without brackets ("OptimizedTier1"), or "".
// Only the runtime's own tier names count, so "int[]" or "List[T]" are none.
inline absl::string_view TierOf(absl::string_view name) {
  if (!absl::EndsWith(name, "]")) return "";
  const size_t open = name.rfind('[');
  if (open == absl::string_view::npos) return "";
  const absl::string_view tier = name.substr(open + 1, name.size() - open - 2);
  for (absl::string_view known : kDotnetTiers) {
    if (tier == known) return tier;
  }
  return "";
}

// `name` without a trailing tier annotation; unchanged when it has none.
inline absl::string_view StripTierSuffix(absl::string_view name) {
  const absl::string_view tier = TierOf(name);
  return tier.empty() ? name : name.substr(0, name.size() - tier.size() - 2);
}

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DOTNET_TIER_H_
