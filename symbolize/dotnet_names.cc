#include "symbolize/dotnet_names.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "symbolize/dotnet_assembly.h"

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

namespace {

// "... /* MT: 0x7fb3a0d1fe30 */..." without the comments (and the space
// before each): what CoreCLR's perf map writes after a generic type's name.
std::string WithoutMethodTableComments(absl::string_view name) {
  std::string out;
  size_t from = 0;
  while (true) {
    const size_t open = name.find("/* MT:", from);
    if (open == absl::string_view::npos) break;
    const size_t close = name.find("*/", open);
    if (close == absl::string_view::npos) break;
    size_t cut = open;
    if (cut > from && name[cut - 1] == ' ') --cut;
    out.append(name.data() + from, cut - from);
    from = close + 2;
  }
  out.append(name.data() + from, name.size() - from);
  return out;
}

}  // namespace

std::string ReadableDotnetName(absl::string_view name) {
  std::string clean = absl::StrContains(name, "/* MT:") ? WithoutMethodTableComments(name)
                                                         : std::string(name);
  // "[Assembly] Ns.Type::Method(...)": the form WithoutReturnType leaves.
  const absl::string_view view = clean;
  if (!absl::StartsWith(view, "[")) return clean;
  const size_t close = view.find("] ");
  if (close == absl::string_view::npos) return clean;
  const absl::string_view assembly = view.substr(1, close - 1);
  const absl::string_view rest = view.substr(close + 2);
  const size_t colons = rest.find("::");
  if (!LooksLikeAssemblyName(assembly) || colons == absl::string_view::npos ||
      colons > rest.find('(')) {
    return clean;
  }
  return absl::StrCat(rest, " [", assembly, "]");
}

size_t MakeDotnetNamesReadable(SymbolTable* table) {
  size_t changed = 0;
  SymbolTable readable;
  for (const auto& [location, symbolization] : table->entries()) {
    Symbolization copy = symbolization;
    if (location.kind == CodeKind::kProcess) {
      for (Frame& frame : copy.frames) {
        std::string name = ReadableDotnetName(frame.function);
        if (name != frame.function) {
          frame.function = std::move(name);
          ++changed;
        }
      }
    }
    readable.Insert(location, std::move(copy));
  }
  *table = std::move(readable);
  return changed;
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
