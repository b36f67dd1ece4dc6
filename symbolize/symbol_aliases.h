// What the ELF and kallsyms symbol tables share when they pick one name among
// aliases at an address and bound a symbol that has no size.
#ifndef PROFCPU_SYMBOLIZE_SYMBOL_ALIASES_H_
#define PROFCPU_SYMBOLIZE_SYMBOL_ALIASES_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace profcpu::symbolize {

// A symbol without a size ends at most a page or two on (x86-64 pages).
inline constexpr uint64_t kPageSize = 4096;

// Of two aliases, the one with fewer leading underscores is the name people
// call (write over __write, __GI___libc_write), as perf prefers it too.
inline size_t LeadingUnderscores(absl::string_view name) {
  size_t n = 0;
  while (n < name.size() && name[n] == '_') ++n;
  return n;
}

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_SYMBOL_ALIASES_H_
