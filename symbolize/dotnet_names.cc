#include "symbolize/dotnet_names.h"

#include "absl/strings/match.h"

namespace profcpu::symbolize {

absl::string_view WithoutReturnType(absl::string_view name) {
  // The module is the first bracket that follows a space and is followed by
  // one; a type's assembly ("[System.Runtime]System.String") or a generic's
  // arguments ("Box`1[T]::Run") touch what follows, and an array's "[]"
  // follows its element type.
  for (size_t close = name.find("] "); close != absl::string_view::npos;
       close = name.find("] ", close + 1)) {
    const size_t open = name.rfind('[', close);
    if (open == absl::string_view::npos || open == 0 || name[open - 1] != ' ') continue;
    if (open + 1 == close) continue;  // "[]"
    // What follows must be "Type::Method" before any argument list.
    const absl::string_view rest = name.substr(close + 2);
    const size_t colons = rest.find("::");
    if (colons == absl::string_view::npos || colons > rest.find('(')) continue;
    return name.substr(open);
  }
  return name;
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
