// An ELF file from the target's root: its program headers, symbol tables,
// string tables, build-id note, .gnu_debuglink and DWARF are all hostile
// (symbolize/elf_symbols.h, symbolize/dwarf_symbols.h). Read both ways
// profcpu reads ELF symbols (a file descriptor and a memory image), its DWARF
// through libdw, and looked up at offsets taken from the input.
#include <cstring>

#include "symbolize/dwarf_symbols.h"
#include "symbolize/elf_symbols.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace symbolize = profcpu::symbolize;

namespace {

void Probe(const symbolize::ElfSymbols& elf, const uint8_t* data, size_t size) {
  for (size_t i = 0; i + 8 <= size && i < 32 * 8; i += 8) {
    uint64_t value;
    std::memcpy(&value, data + i, 8);
    for (uint64_t probe : {value, value & 0xffff, uint64_t{i}}) {
      (void)elf.LookupFileOffset(probe);
      if (auto match = elf.LookupAddress(probe)) {
        Check(match->offset <= probe, "a symbol starts after the address");
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view image = profcpu::fuzz::AsText(data, size);
  symbolize::ElfSymbolLimits limits;
  limits.max_symbols = 100000;
  limits.max_name_bytes = 1 << 20;
  auto from_image = symbolize::ElfSymbols::FromImage(image, "fuzz image", limits);
  if (from_image.ok()) Probe(**from_image, data, size);

  profcpu::fuzz::MemFile file(image);
  auto from_fd = symbolize::ElfSymbols::FromFd(file.fd(), "fuzz file", limits);
  Check(from_fd.ok() == from_image.ok(), "reading ELF from a file and from memory disagree");
  if (from_fd.ok()) {
    Check((*from_fd)->size() == (*from_image)->size() &&
              (*from_fd)->build_id() == (*from_image)->build_id(),
          "ELF read from a file and from memory differ");
    Probe(**from_fd, data, size);
    // The debuglink name is joined to directories: it must be a bare name.
    if (const auto& link = (*from_fd)->debug_link(); link.has_value()) {
      Check(!link->name.empty() && link->name.find('/') == std::string::npos &&
                link->name != "." && link->name != "..",
            "a .gnu_debuglink name that is a path was accepted");
    }
  }

  // The build-id alone (the symbol cache's key): from the same PT_NOTE
  // segments the full read looks in first, so the same when both find one.
  const std::string build_id = symbolize::ElfSymbols::ReadBuildIdNote(file.fd());
  if (from_fd.ok() && !build_id.empty()) {
    Check(build_id == (*from_fd)->build_id(), "the build-id alone differs from the full read's");
  }

  symbolize::DwarfLimits dwarf_limits;
  dwarf_limits.max_units = 1000;
  dwarf_limits.max_functions_per_unit = 10000;
  auto dwarf = symbolize::DwarfSymbols::FromFd(file.fd(), "fuzz file", dwarf_limits);
  if (dwarf.ok()) {
    for (size_t i = 0; i + 8 <= size && i < 16 * 8; i += 8) {
      uint64_t address;
      std::memcpy(&address, data + i, 8);
      for (uint64_t probe : {address, address & 0xffff}) {
        for (const auto& frame : (*dwarf)->Lookup(probe)) {
          Check(frame.function.size() < (size_t{1} << 20), "an absurd DWARF function name");
        }
      }
    }
  }
  return 0;
}
