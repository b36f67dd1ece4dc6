// Where a file's PT_LOAD segments place it in memory: enough to turn one of
// a process's mappings of the file into the file's load bias and the
// address range libdwfl gives its module (libdwfl puts a module's start at
// its first PT_LOAD's page-aligned p_vaddr: dwfl_module_getdwarf.c,
// open_elf). Read once per file by the DWARF unwinder's sessions.
#ifndef PROFCPU_SYMBOLIZE_LOAD_LAYOUT_H_
#define PROFCPU_SYMBOLIZE_LOAD_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "symbolize/code_location.h"

struct Elf;  // libelf.h: typedef struct Elf Elf

namespace profcpu::symbolize {

struct LoadLayout {
  bool usable = false;  // at least one PT_LOAD, spanning some bytes
  bool exec = false;    // ET_EXEC: linked at its addresses, bias 0
  uint64_t first_vaddr = 0;  // the first PT_LOAD's p_vaddr, page-aligned
  uint64_t end_vaddr = 0;    // the end of the highest PT_LOAD in memory
  std::vector<LoadSegment> segments;
};

// The layout of `elf`; not usable when its headers cannot be read, or when
// it claims more than 4096 program headers (no sane file has).
LoadLayout ReadLoadLayout(Elf* elf);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_LOAD_LAYOUT_H_
