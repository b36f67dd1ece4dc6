// The short label of a .NET frame that does not fit its box. Its name puts
// the method first and the assembly last ("System.Text.Json.Serialization.
// JsonConverter`1[System.__Canon]::WriteCore[OptimizedTier1]
// [System.Text.Json]", symbolize/dotnet_assembly.h); cut from the right it
// would still show the namespace and not the method. The namespace, generic
// arguments, tier and assembly go first ("JsonConverter`1::WriteCore"), and
// only that is cut if it is still too long. The SVG's script and
// profile.html's flame graph apply the same rule (shortLabel in their JS).
#ifndef PROFCPU_RENDER_DOTNET_LABEL_H_
#define PROFCPU_RENDER_DOTNET_LABEL_H_

#include <string>

#include "absl/strings/string_view.h"

namespace profcpu::render {

// "Type::Method" of a .NET frame name in profcpu's form, or "" for any other
// name (which is cut as flamegraph.pl cuts it).
std::string ShortDotnetLabel(absl::string_view name);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_DOTNET_LABEL_H_
