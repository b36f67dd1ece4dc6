#include "collector/callgraph_choice.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace profcpu::collector {

absl::StatusOr<CallgraphChoice> ParseCallgraph(absl::string_view value) {
  CallgraphChoice choice;
  if (value == "fp") return choice;
  absl::string_view size = value;
  uint32_t* bytes = nullptr;
  uint32_t default_bytes = 0;
  if (absl::ConsumePrefix(&size, "dwarf")) {
    bytes = &choice.dwarf_stack_size;
    default_bytes = kDefaultDwarfStackSize;
  } else if (absl::ConsumePrefix(&size, "fp+cfi")) {
    bytes = &choice.leaf_stack_size;
    default_bytes = kDefaultLeafStackSize;
  }
  if (bytes != nullptr && size.empty()) {
    *bytes = default_bytes;
    return choice;
  }
  if (bytes != nullptr && absl::ConsumePrefix(&size, ",") && absl::SimpleAtoi(size, bytes) &&
      *bytes >= 8 && *bytes <= 65528 && *bytes % 8 == 0) {
    return choice;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "-callgraph must be fp, fp+cfi[,BYTES] or dwarf[,BYTES] (BYTES a multiple of 8 up to "
      "65528), got '",
      value, "'"));
}

std::string CallgraphSpelling(absl::string_view walker, uint32_t stack_bytes) {
  if (walker == "fp" || stack_bytes == 0) return std::string(walker);
  return absl::StrCat(walker, ",", stack_bytes);
}

}  // namespace profcpu::collector
