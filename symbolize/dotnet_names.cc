#include "symbolize/dotnet_names.h"

#include "absl/strings/match.h"

namespace profcpu::symbolize {
namespace {

// CoreCLR's tier names (vm/prestub.cpp, PrepareCodeConfig::GetJitOptimizationTierStr)
// and the tags of precompiled code ([PreJIT] in perf maps and jitdumps).
constexpr absl::string_view kTiers[] = {
    "Unknown",          "MinOptJitted",      "Optimized",        "QuickJitted",
    "OptimizedTier1",   "OptimizedTier1OSR", "InstrumentedTier", "InstrumentedTierOptimized",
    "PreJIT",           "ReadyToRun",
};

}  // namespace

absl::string_view TierOf(absl::string_view name) {
  if (!absl::EndsWith(name, "]")) return "";
  size_t open = name.rfind('[');
  if (open == absl::string_view::npos) return "";
  absl::string_view tier = name.substr(open + 1, name.size() - open - 2);
  for (absl::string_view known : kTiers) {
    if (tier == known) return tier;
  }
  return "";
}

absl::string_view StripTierSuffix(absl::string_view name) {
  absl::string_view tier = TierOf(name);
  if (tier.empty()) return name;
  return name.substr(0, name.size() - tier.size() - 2);
}

size_t StripTierSuffixes(SymbolTable* table) {
  size_t changed = 0;
  SymbolTable stripped;
  for (const auto& [location, symbolization] : table->entries()) {
    Symbolization copy = symbolization;
    if (location.kind == CodeKind::kProcess) {
      for (Frame& frame : copy.frames) {
        absl::string_view bare = StripTierSuffix(frame.function);
        if (bare.size() != frame.function.size()) {
          frame.function = std::string(bare);
          ++changed;
        }
      }
    }
    stripped.Insert(location, std::move(copy));
  }
  *table = std::move(stripped);
  return changed;
}

}  // namespace profcpu::symbolize
