// Where a .NET method's assembly goes in the names profcpu writes: last,
// after the method ("System.Text.Json.Serialization.JsonConverter`1[System.
// __Canon]::WriteCore(...)[OptimizedTier1] [System.Text.Json]"), so a narrow
// flame graph box shows what the function is, not the start of its assembly.
// The runtime writes it first ("[System.Text.Json] ...": perf maps, jitdumps,
// method events, and the symbol snapshot keeps that form); dotnet_names.h
// moves it. Header-only: fold's frame naming, which cuts argument lists, and
// its PerfView dialect, which puts it back first for PerfView's parser, read
// it too.
#ifndef PROFCPU_SYMBOLIZE_DOTNET_ASSEMBLY_H_
#define PROFCPU_SYMBOLIZE_DOTNET_ASSEMBLY_H_

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "symbolize/dotnet_tier.h"

namespace profcpu::symbolize {

// An assembly's simple name as it may appear between brackets: no brackets,
// no parentheses, not a tier, not GCC's "[clone .cold]" of a C++ name.
inline bool LooksLikeAssemblyName(absl::string_view name) {
  if (name.empty() || absl::StartsWith(name, "clone ") || absl::StartsWith(name, "abi:")) {
    return false;
  }
  for (char c : name) {
    if (c == '[' || c == ']' || c == '(' || c == ')' || c == '<' || c == '>') return false;
  }
  for (absl::string_view tier : kDotnetTiers) {
    if (name == tier) return false;
  }
  return true;
}

// The assembly of a name in profcpu's form, "Ns.Type::Method... [Assembly]",
// without brackets; "" for any other name.
inline absl::string_view TrailingAssembly(absl::string_view name) {
  if (!absl::EndsWith(name, "]")) return "";
  const size_t open = name.rfind(" [");
  if (open == absl::string_view::npos) return "";
  const absl::string_view assembly = name.substr(open + 2, name.size() - open - 3);
  if (!LooksLikeAssemblyName(assembly)) return "";
  if (!absl::StrContains(name.substr(0, open), "::")) return "";
  return assembly;
}

// `name` without its trailing " [Assembly]" (unchanged without one).
inline absl::string_view WithoutTrailingAssembly(absl::string_view name) {
  const absl::string_view assembly = TrailingAssembly(name);
  return assembly.empty() ? name : name.substr(0, name.size() - assembly.size() - 3);
}

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DOTNET_ASSEMBLY_H_
