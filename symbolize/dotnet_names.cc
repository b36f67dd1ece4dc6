#include "symbolize/dotnet_names.h"

#include "absl/strings/match.h"

namespace profcpu::symbolize {

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
