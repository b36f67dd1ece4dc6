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
#include <vector>

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
  // kProcess only: which definition of JIT code at this address was current
  // at the sample's time (1-based, from the process's jitdump; see
  // symbolize/jit_history.h), or 0 when no timed source knew it. Runtimes
  // reuse code addresses, so the same address can name different methods at
  // different times.
  uint32_t epoch = 0;

  friend bool operator==(const CodeLocation& a, const CodeLocation& b) {
    return a.kind == b.kind && a.space == b.space && a.value == b.value && a.epoch == b.epoch;
  }
  friend bool operator<(const CodeLocation& a, const CodeLocation& b) {
    return std::tie(a.kind, a.space, a.value, a.epoch) <
           std::tie(b.kind, b.space, b.value, b.epoch);
  }
  template <typename H>
  friend H AbslHashValue(H h, const CodeLocation& l) {
    return H::combine(std::move(h), l.kind, l.space, l.value, l.epoch);
  }
};

// A PT_LOAD program header of a module's ELF file: how its file offsets map
// to the link-time addresses its symbols and DWARF use (System V gABI,
// "Program Loading"). Kept with the Module because separate debug files
// (objcopy --only-keep-debug) zero p_offset/p_filesz, so a laptop holding only
// the debug file could not translate offsets otherwise.
struct LoadSegment {
  uint64_t file_offset = 0;
  uint64_t file_size = 0;
  uint64_t address = 0;
  bool executable = false;

  friend bool operator==(const LoadSegment& a, const LoadSegment& b) {
    return a.file_offset == b.file_offset && a.file_size == b.file_size &&
           a.address == b.address && a.executable == b.executable;
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
  // The file's PT_LOAD headers, once the symbolizer has read it (empty before).
  std::vector<LoadSegment> segments;
  // Named from DWARF or a separate debug file. Kept in the snapshot so a
  // postprocess that reads no file still counts it (metadata.json).
  bool debug_info = false;
};

// A distinct location the replay met, for the symbolizer to name once.
struct SymbolRequest {
  CodeLocation location;
  std::string mapping_name;  // from NormalizedAddress; shown for unnamed frames
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_CODE_LOCATION_H_
