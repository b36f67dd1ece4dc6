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

absl::StatusOr<std::string> FitStackCopyToRing(size_t ring_pages, bool bytes_given,
                                               uint32_t* copy_bytes) {
  const uint64_t ring_bytes = static_cast<uint64_t>(ring_pages) * 4096;
  const uint64_t quarter = ring_bytes / 4;
  const uint64_t fits = quarter > 512 + 8 ? (quarter - 512) / 8 * 8 : 8;
  if (*copy_bytes == 0 || *copy_bytes <= fits) return std::string();
  const uint64_t pages_needed = ((static_cast<uint64_t>(*copy_bytes) + 512) * 4 + 4095) / 4096;
  uint64_t power = 1;
  while (power < pages_needed) power *= 2;
  if (bytes_given) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-callgraph's ", *copy_bytes, " bytes of stack per sample leave no room in -mmap-pages ",
        ring_pages, "'s ring buffer (", ring_bytes, " bytes per CPU): give -mmap-pages ", power,
        " or more, or copy at most ", fits, " bytes"));
  }
  std::string note = absl::StrCat("-mmap-pages ", ring_pages, " holds no sample with -callgraph's ",
                                  *copy_bytes, "-byte stack copy: copying ", fits,
                                  " bytes instead (stacks through code without frame pointers may "
                                  "stop short; -mmap-pages ", power, " keeps the default)");
  *copy_bytes = static_cast<uint32_t>(fits);
  return note;
}

}  // namespace profcpu::collector
