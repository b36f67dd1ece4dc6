// A file's .eh_frame_hdr (its binary-search table of FDEs by start address)
// and the .eh_frame it indexes, read into memory with their link-time
// addresses: what libunwind's dwarf_search_unwind_table reads, through our
// memory callback, to find the CFI of an address in a process that has
// exited or is another process's (libunwind_unwinder.h). The file is
// hostile: sizes are checked against the file and capped, encodings other
// than those the linkers write are refused.
#ifndef PROFCPU_SYMBOLIZE_EH_FRAME_TABLE_H_
#define PROFCPU_SYMBOLIZE_EH_FRAME_TABLE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "symbolize/elf_file.h"

namespace profcpu::symbolize {

struct EhFrameTable {
  uint64_t hdr_address = 0;  // link-time address of .eh_frame_hdr
  std::string hdr;
  uint64_t frame_address = 0;  // link-time address of .eh_frame
  std::string frame;
  uint64_t table_address = 0;  // the sorted (start, FDE) table inside hdr
  uint64_t fde_count = 0;

  // The 8 bytes at link-time `address` when any lies inside hdr or frame
  // (those outside read as zero).
  bool Read(uint64_t address, uint64_t* word) const;
  size_t bytes() const { return hdr.size() + frame.size(); }
};

// At most this much of .eh_frame is read per file (libxul's is ~10 MiB).
inline constexpr uint64_t kMaxEhFrameBytes = uint64_t{64} << 20;

// The table of `file`, from its PT_GNU_EH_FRAME program header (stripped
// files keep it) and the .eh_frame its header points at (bounded by the
// section when section headers name it, else by the PT_LOAD holding it).
// NotFound when the file has no PT_GNU_EH_FRAME; DataLoss when it is
// malformed or uses an encoding the linkers do not write.
absl::StatusOr<EhFrameTable> ReadEhFrameTable(const ElfFile& file);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_EH_FRAME_TABLE_H_
