// A sampled address "normalized" (as blazesym calls it): turned from a
// per-process virtual address into something that names code independently of
// where it was loaded. Native code becomes (module, file offset), so one lookup
// serves every process that maps the same library and a laptop with the right
// debug file can finish the job; JIT and kernel code stay addresses.
#ifndef PROFCPU_SYMBOLIZE_CODE_LOCATION_H_
#define PROFCPU_SYMBOLIZE_CODE_LOCATION_H_

#include <cstdint>
#include <string>
#include <tuple>

#include "absl/hash/hash.h"

namespace profcpu::symbolize {

enum class CodeKind : uint8_t {
  kKernel = 1,    // kernel or module text; `value` is the kernel address
  kNative = 2,    // file-backed mapping; `space` is a module id, `value` a file offset
  kProcess = 3,   // anonymous/JIT/unknown mapping; `space` is a pid, `value` the address
  kImported = 4,  // frame read from text (perf script); `space`/`value` index the text's table
};

struct CodeLocation {
  CodeKind kind = CodeKind::kProcess;
  uint32_t space = 0;
  uint64_t value = 0;

  friend bool operator==(const CodeLocation& a, const CodeLocation& b) {
    return a.kind == b.kind && a.space == b.space && a.value == b.value;
  }
  friend bool operator<(const CodeLocation& a, const CodeLocation& b) {
    return std::tie(a.kind, a.space, a.value) < std::tie(b.kind, b.space, b.value);
  }
  template <typename H>
  friend H AbslHashValue(H h, const CodeLocation& l) {
    return H::combine(std::move(h), l.kind, l.space, l.value);
  }
};

// A file that code was mapped from, as the target saw it.
struct Module {
  std::string path;  // path inside the target's root, e.g. "/usr/lib/libc.so.6"
  uint32_t dev_major = 0;
  uint32_t dev_minor = 0;
  uint64_t inode = 0;
  std::string build_id;  // raw bytes when known
  // A process that mapped it: its root (/proc/PID/root) is where to open `path`.
  uint32_t example_pid = 0;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_CODE_LOCATION_H_
