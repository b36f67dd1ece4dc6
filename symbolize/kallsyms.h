// Kernel text symbols from /proc/kallsyms.
//
// Lines are "ADDRESS TYPE NAME" for the core kernel and
// "ADDRESS TYPE NAME\t[MODULE]" for loadable modules (kernel/kallsyms.c,
// s_show). Only text symbols (types t, T, w, W) are kept; kallsyms gives no
// sizes, so a symbol extends to the next one, as perf assumes
// (tools/perf/util/symbol.c, symbols__fixup_end). Without CAP_SYSLOG, or with
// kernel.kptr_restrict=2, every address reads as zero
// (Documentation/admin-guide/sysctl/kernel.rst, kptr_restrict).
#ifndef PROFCPU_SYMBOLIZE_KALLSYMS_H_
#define PROFCPU_SYMBOLIZE_KALLSYMS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::symbolize {

// What perf shows as the module of core kernel code.
inline constexpr absl::string_view kKernelModule = "[kernel.kallsyms]";

struct KernelSymbolMatch {
  absl::string_view name;    // valid as long as the Kallsyms
  uint64_t offset = 0;       // from the symbol's start
  absl::string_view module;  // "[kernel.kallsyms]" or "[MODULE]"
};

class Kallsyms {
 public:
  // /proc/kallsyms is ~15 MB on a distribution kernel with many modules.
  static constexpr size_t kMaxBytes = size_t{256} << 20;

  // Parses kallsyms text. FailedPrecondition when every address is zero
  // (symbols hidden), InvalidArgument when no line is a symbol.
  static absl::StatusOr<Kallsyms> Parse(absl::string_view text);
  // Reads `path` (at most kMaxBytes) and parses it.
  static absl::StatusOr<Kallsyms> Load(const std::string& path);

  std::optional<KernelSymbolMatch> Lookup(uint64_t address) const;

  size_t size() const { return symbols_.size(); }
  // Memory held, roughly, for a cache's byte cap.
  size_t EstimatedBytes() const {
    size_t bytes = sizeof(*this) + symbols_.capacity() * sizeof(Symbol) + names_.capacity();
    for (const std::string& module : modules_) bytes += sizeof(module) + module.capacity();
    return bytes;
  }
  // Lines that were not "ADDRESS TYPE NAME[\t[MODULE]]".
  size_t malformed_lines() const { return malformed_lines_; }

 private:
  struct Symbol {
    uint64_t address = 0;
    uint64_t end = 0;  // exclusive
    uint32_t name_offset = 0;
    uint32_t name_length = 0;
    uint32_t module = 0;  // index into modules_
  };

  std::vector<Symbol> symbols_;       // sorted by address, one per address
  std::string names_;                 // names back to back
  std::vector<std::string> modules_;  // modules_[0] is kKernelModule
  size_t malformed_lines_ = 0;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_KALLSYMS_H_
