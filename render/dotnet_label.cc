#include "render/dotnet_label.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace profcpu::render {

std::string ShortDotnetLabel(absl::string_view name) {
  // "... [Assembly]" at the end, a "::" before it.
  if (!absl::EndsWith(name, "]")) return "";
  const size_t open = name.rfind(" [");
  if (open == absl::string_view::npos) return "";
  const absl::string_view assembly = name.substr(open + 2, name.size() - open - 3);
  if (assembly.empty() || absl::StartsWith(assembly, "clone ") ||
      assembly.find_first_of("[]()<>") != absl::string_view::npos) {
    return "";
  }
  const absl::string_view method_and_type = name.substr(0, open);
  const size_t scope = method_and_type.rfind("::");
  if (scope == absl::string_view::npos) return "";
  // The method without its argument list, tier or generic arguments.
  absl::string_view method = method_and_type.substr(scope + 2);
  method = method.substr(0, method.find_first_of("[(<"));
  // The type without its generic arguments ("[...]", nested), then without
  // its namespace: what follows the last '.' outside brackets.
  std::string type;
  int depth = 0;
  for (char c : method_and_type.substr(0, scope)) {
    if (c == '[' || c == '<') {
      ++depth;
    } else if (c == ']' || c == '>') {
      if (depth > 0) --depth;
    } else if (depth == 0) {
      if (c == '.') {
        type.clear();
      } else {
        type.push_back(c);
      }
    }
  }
  if (type.empty() || method.empty()) return "";
  return absl::StrCat(type, "::", method);
}

}  // namespace profcpu::render
