// .NET method names as the runtime writes them into perf maps and jitdumps:
// "instance int32 [App] App.Calc::Sum(int32)[OptimizedTier1]". The bracketed
// suffix is the code's tier (DOTNET_PerfMapShowOptimizationTiers, on by
// default): worth seeing when tiering matters, noise when comparing
// profiles, where one method's tiers split into several frames. profcpu keeps
// it by default and strips it on request (-strip-tiers).
#ifndef PROFCPU_SYMBOLIZE_DOTNET_NAMES_H_
#define PROFCPU_SYMBOLIZE_DOTNET_NAMES_H_

#include <string>

#include "absl/strings/string_view.h"
#include "symbolize/dotnet_tier.h"
#include "symbolize/symbol_table.h"

namespace profcpu::symbolize {

// A .NET method's name from its "[Module] " on: without the return type
// (and "instance") the runtime's perf map and jitdump put first
// ("instance class [System.Runtime]System.Threading.Tasks.Task [App]
// App.Api::Get(int32)[OptimizedTier1]" -> "[App] App.Api::Get(int32)
// [OptimizedTier1]"). The return type says little in a flame graph, and the
// runtime's method events, which name code when there is no perf map, write
// its types without their assemblies: only without it do the two sources
// name a method alike. Any other name (native, Node.js) is returned as it is.
absl::string_view WithoutReturnType(absl::string_view name);

// A .NET method's name as profcpu's outputs show it: the runtime's "/* MT:
// 0x7f2b... */" comments (method-table addresses in generic arguments, which
// differ per process) removed, and the assembly moved last ("[App]
// App.Calc::Sum(int32)[OptimizedTier1]" -> "App.Calc::Sum(int32)
// [OptimizedTier1] [App]", dotnet_assembly.h). Any other name is returned as
// it is.
std::string ReadableDotnetName(absl::string_view name);

// ReadableDotnetName on every frame of every JIT location (kProcess) in
// `table`; returns how many frames changed. The snapshot keeps the runtime's
// form: this is for the outputs.
size_t MakeDotnetNamesReadable(SymbolTable* table);

// Strips the tier suffix from every frame of every JIT location (kProcess)
// in `table`; returns how many frames changed.
size_t StripTierSuffixes(SymbolTable* table);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DOTNET_NAMES_H_
