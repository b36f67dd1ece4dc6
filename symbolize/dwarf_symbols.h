// Function names, inlined calls and source lines from a file's DWARF
// (.debug_info/.debug_line, DWARF 2 to 5, compressed sections included),
// read with libdw.
//
// A lookup takes a link-time address and gives the frames it stands for,
// innermost first: each DW_TAG_inlined_subroutine containing the address is a
// frame of its own (marked inlined), ending with the DW_TAG_subprogram it was
// inlined into. The innermost frame's line comes from the line table; each
// outer frame's line is the call site its inner frame records
// (DW_AT_call_file/DW_AT_call_line), as `addr2line -i` prints them (DWARF 5
// spec, 3.3.8 "Inlinable and Inlined Subroutines").
//
// Lookups are indexed: units are found by their address ranges (built from
// the units themselves: .debug_aranges is optional and clang omits it), and
// each unit's function tree is walked once, on its first lookup, into nested
// range lists. The file is hostile input: unit, function and depth counts are
// capped, and the Elf is read with ELF_C_READ (a file truncated under us
// gives read errors, not SIGBUS).
#ifndef PROFCPU_SYMBOLIZE_DWARF_SYMBOLS_H_
#define PROFCPU_SYMBOLIZE_DWARF_SYMBOLS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "symbolize/symbol_table.h"

namespace profcpu::symbolize {

struct DwarfLimits {
  size_t max_units = 1 << 20;
  size_t max_functions_per_unit = 1 << 22;
  size_t max_depth = 256;  // DIE nesting walked (inline chains are far shallower)
  // The .debug_* sections' bytes (decompressed) a file may have for its DWARF
  // to be read. libdw reads them all into memory when it opens the file, and
  // indexing a unit costs a few times its share again (abbreviations, line
  // tables, the function index): a module with 75 MB of DWARF took a
  // long-running process to 270 MB of heap. Past it FromFd refuses the file
  // (ResourceExhausted) before reading any of it; the module is then named
  // from its ELF symbol tables, without inlined frames or lines. The default
  // reads any size (collect, postprocess); the fleet agent sets a bound.
  uint64_t max_section_bytes = UINT64_MAX;
};

class DwarfSymbols {
 public:
  // Reads the DWARF of the ELF file open at `fd`; the fd is duplicated and
  // kept for lazy reads. NotFound when the file has no DWARF;
  // ResourceExhausted when its debug sections exceed
  // limits.max_section_bytes (nothing of them is read).
  static absl::StatusOr<std::unique_ptr<DwarfSymbols>> FromFd(int fd, absl::string_view what,
                                                             const DwarfLimits& limits = {});
  ~DwarfSymbols();
  DwarfSymbols(const DwarfSymbols&) = delete;
  DwarfSymbols& operator=(const DwarfSymbols&) = delete;

  // Frames for `address` (link-time), innermost first; function names
  // demangled, offsets relative to the outermost function's start. Empty
  // when no unit or function covers the address.
  std::vector<Frame> Lookup(uint64_t address);

  size_t unit_count() const;
  // Memory held, roughly, for a cache's byte cap: the debug sections libdw
  // read (decompressed) and the indexes built so far, which grow as lookups
  // reach new units.
  size_t EstimatedBytes() const;
  // True when a cap stopped indexing: some addresses may go unnamed.
  bool truncated() const;

 private:
  class Impl;
  explicit DwarfSymbols(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DWARF_SYMBOLS_H_
