// Function symbols of one ELF file, looked up by file offset.
//
// Sampled native addresses arrive normalized to (module, file offset)
// (code_location.h). An ELF symbol's st_value is a virtual address in the
// file's own link-time layout, so a lookup first maps the offset through the
// PT_LOAD program header that holds it (System V gABI, "Program Loading":
// vaddr = offset - p_offset + p_vaddr), then finds the symbol containing that
// address.
//
// Symbols come from .symtab and .dynsym merged (a stripped file keeps only
// .dynsym, whose exported functions can still be named); where both name the
// same address, .symtab wins. The file is treated as hostile: every header,
// table and string is bounds-checked against the file's size before libelf
// reads it, and the symbol count and name bytes are capped.
#ifndef PROFCPU_SYMBOLIZE_ELF_SYMBOLS_H_
#define PROFCPU_SYMBOLIZE_ELF_SYMBOLS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "symbolize/code_location.h"

namespace profcpu::symbolize {

struct ElfSymbolLimits {
  // Far above any real library (libxul.so has ~1M symbols), far below what
  // would exhaust memory: ~40 bytes each.
  size_t max_symbols = 4'000'000;
  // Bytes of symbol names kept (a string table bigger than this is refused).
  size_t max_name_bytes = size_t{512} << 20;
};

// A symbol found for an address: the demangled name and how far into the
// function the address is.
struct SymbolMatch {
  std::string function;
  uint64_t offset = 0;
};

// A file's .gnu_debuglink section: the name of its separate debug file and
// the CRC-32 of that file's contents (GDB manual, "Debugging Information in
// Separate Files": name, NUL, padding to 4 bytes, 4-byte CRC).
struct DebugLink {
  std::string name;  // a bare file name; never a path (checked when read)
  uint32_t crc = 0;
};

// The link-time address of `file_offset` through the PT_LOAD that holds it,
// executable segments first (with old linker layouts a page may be shared by
// the end of one segment and the start of the next); nullopt when none does.
std::optional<uint64_t> FileOffsetToAddress(const std::vector<LoadSegment>& segments,
                                            uint64_t file_offset);

class ElfSymbols {
 public:
  // Reads the ELF file open at `fd` (only used during the call; its file
  // position is not used). `what` names the file in errors. Fails with
  // InvalidArgument for a file that is not ELF and DataLoss for a malformed one.
  static absl::StatusOr<std::unique_ptr<ElfSymbols>> FromFd(int fd, absl::string_view what,
                                                            const ElfSymbolLimits& limits = {});

  // Reads an ELF image held in memory with the file's layout (the vdso). The
  // image is copied, so it need only live for the call.
  static absl::StatusOr<std::unique_ptr<ElfSymbols>> FromImage(absl::string_view image,
                                                               absl::string_view what,
                                                               const ElfSymbolLimits& limits = {});

  // Only the GNU build-id of the ELF file open at `fd`, from its PT_NOTE
  // segments (a few small reads, no symbol table): "" when it has none or is
  // not ELF. A cache's key (loaded_symbol_cache.h).
  static std::string ReadBuildIdNote(int fd);

  // Memory held, roughly, for a cache's byte cap.
  size_t EstimatedBytes() const {
    return sizeof(*this) + symbols_.capacity() * sizeof(Symbol) + names_.capacity() +
           segments_.capacity() * sizeof(Segment) +
           load_segments_.capacity() * sizeof(LoadSegment);
  }

  // The link-time virtual address of a file offset, through this file's own
  // PT_LOAD headers (see the free function of the same name).
  std::optional<uint64_t> FileOffsetToAddress(uint64_t file_offset) const;

  // The function containing a link-time virtual address: [value, value+size)
  // for sized symbols; a zero-sized symbol extends to the next symbol (or the
  // end of its segment). nullopt when no symbol covers the address.
  std::optional<SymbolMatch> LookupAddress(uint64_t address) const;

  // FileOffsetToAddress then LookupAddress.
  std::optional<SymbolMatch> LookupFileOffset(uint64_t file_offset) const;

  // Distinct function addresses kept.
  size_t size() const { return symbols_.size(); }
  // The GNU build-id (NT_GNU_BUILD_ID) as raw bytes, or empty.
  const std::string& build_id() const { return build_id_; }
  // True when limits.max_symbols cut the tables short.
  bool truncated() const { return truncated_; }
  // The file's PT_LOAD headers as read (a separate debug file's are zeroed).
  const std::vector<LoadSegment>& load_segments() const { return load_segments_; }
  // The .gnu_debuglink section, when the file has a well-formed one.
  const std::optional<DebugLink>& debug_link() const { return debug_link_; }
  // The file has a .symtab (not only .dynsym) / DWARF (.debug_info, possibly
  // compressed or .zdebug_info).
  bool has_symtab() const { return has_symtab_; }
  bool has_dwarf() const { return has_dwarf_; }

 private:
  struct Segment {
    uint64_t offset = 0;
    uint64_t file_size = 0;
    uint64_t address = 0;
    uint64_t memory_size = 0;
    bool executable = false;
  };
  struct Symbol {
    uint64_t address = 0;
    uint64_t end = 0;  // exclusive; computed after merging
    uint32_t name_offset = 0;
    uint32_t name_length = 0;
  };
  class Loader;

  ElfSymbols() = default;
  absl::string_view NameOf(const Symbol& symbol) const {
    return absl::string_view(names_).substr(symbol.name_offset, symbol.name_length);
  }

  std::vector<Segment> segments_;
  std::vector<LoadSegment> load_segments_;  // segments_ as the public type
  std::vector<Symbol> symbols_;  // sorted by address, one per address
  std::string names_;            // every kept name, mangled, back to back
  std::string build_id_;
  bool truncated_ = false;
  std::optional<DebugLink> debug_link_;
  bool has_symtab_ = false;
  bool has_dwarf_ = false;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_ELF_SYMBOLS_H_
