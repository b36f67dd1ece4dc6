#include "symbolize/eh_frame_table.h"

#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace profcpu::symbolize {
namespace {

constexpr size_t kMaxProgramHeaders = 4096;
constexpr size_t kMaxSections = 1 << 16;

// `size` bytes at `offset` of the file (pread: libelf's ELF_C_READ handle
// reads no more than it is asked for), or of the image in memory.
absl::StatusOr<std::string> ReadBytes(const ElfFile& file, uint64_t offset, uint64_t size) {
  std::string out;
  if (file.fd() < 0) {
    size_t image_size = 0;
    const char* image = elf_rawfile(file.get(), &image_size);
    if (image == nullptr || offset > image_size || image_size - offset < size) {
      return absl::DataLossError("bytes past the end of the image");
    }
    out.assign(image + offset, size);
    return out;
  }
  out.resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(file.fd(), out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::DataLossError("bytes past the end of the file");
    done += static_cast<size_t>(n);
  }
  return out;
}

// One .eh_frame_hdr field at hdr[*pos] in `encoding`, relative to the
// header's own address for the pc- and data-relative forms.
std::optional<uint64_t> DecodeField(const std::string& hdr, size_t* pos, uint8_t encoding,
                                    uint64_t hdr_address) {
  uint64_t value = 0;
  switch (encoding & 0x0f) {
    case DW_EH_PE_udata4:
    case DW_EH_PE_sdata4: {
      if (hdr.size() - *pos < 4) return std::nullopt;
      uint32_t raw;
      std::memcpy(&raw, hdr.data() + *pos, 4);
      value = (encoding & 0x0f) == DW_EH_PE_sdata4
                  ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(raw)))
                  : raw;
      break;
    }
    case DW_EH_PE_udata8:
    case DW_EH_PE_sdata8:
      if (hdr.size() - *pos < 8) return std::nullopt;
      std::memcpy(&value, hdr.data() + *pos, 8);
      break;
    default:
      return std::nullopt;
  }
  const uint64_t field_address = hdr_address + *pos;
  *pos += (encoding & 0x0f) == DW_EH_PE_udata4 || (encoding & 0x0f) == DW_EH_PE_sdata4 ? 4 : 8;
  switch (encoding & 0x70) {
    case DW_EH_PE_absptr:
      return value;
    case DW_EH_PE_pcrel:
      return field_address + value;
    case DW_EH_PE_datarel:
      return hdr_address + value;
    default:
      return std::nullopt;
  }
}

// The file extent of .eh_frame at `address`: its section when named, else
// the rest of the PT_LOAD that holds it.
std::optional<std::pair<uint64_t, uint64_t>> EhFrameExtent(Elf* elf, uint64_t address,
                                                           size_t phnum) {
  size_t shstrndx = 0;
  size_t shnum = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) == 0 && elf_getshdrnum(elf, &shnum) == 0 &&
      shnum <= kMaxSections) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_addr != address ||
          shdr.sh_type == SHT_NOBITS) {
        continue;
      }
      const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
      if (name != nullptr && std::strcmp(name, ".eh_frame") == 0) {
        return std::make_pair(uint64_t{shdr.sh_offset}, uint64_t{shdr.sh_size});
      }
    }
  }
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) continue;
    if (address >= phdr.p_vaddr && address - phdr.p_vaddr < phdr.p_filesz) {
      const uint64_t skip = address - phdr.p_vaddr;
      return std::make_pair(phdr.p_offset + skip, phdr.p_filesz - skip);
    }
  }
  return std::nullopt;
}

}  // namespace

// libunwind reads bytes as the aligned words holding them, which may stick
// out of either end of a section: the bytes outside read as zero.
bool EhFrameTable::Read(uint64_t address, uint64_t* word) const {
  unsigned char bytes[sizeof(uint64_t)] = {};
  bool any = false;
  for (const auto& [start, data] : {std::pair<uint64_t, const std::string*>{hdr_address, &hdr},
                                    {frame_address, &frame}}) {
    const uint64_t end = start + data->size();
    if (address >= end || address + sizeof(bytes) <= start || address + sizeof(bytes) < address) {
      continue;
    }
    const uint64_t from = std::max(address, start);
    const uint64_t to = std::min(address + sizeof(bytes), end);
    std::memcpy(bytes + (from - address), data->data() + (from - start), to - from);
    any = true;
  }
  if (any) std::memcpy(word, bytes, sizeof(bytes));
  return any;
}

absl::StatusOr<EhFrameTable> ReadEhFrameTable(const ElfFile& file) {
  Elf* elf = file.get();
  size_t phnum = 0;
  if (elf == nullptr || elf_getphdrnum(elf, &phnum) != 0 || phnum > kMaxProgramHeaders) {
    return absl::DataLossError("unreadable program headers");
  }
  std::optional<GElf_Phdr> eh;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_GNU_EH_FRAME) {
      eh = phdr;
      break;
    }
  }
  if (!eh.has_value()) return absl::NotFoundError("no PT_GNU_EH_FRAME (.eh_frame_hdr)");
  // 12 bytes of header and 8 per FDE: 64 MiB is ~8M functions.
  if (eh->p_filesz < 8 || eh->p_filesz > kMaxEhFrameBytes) {
    return absl::DataLossError(absl::StrCat(".eh_frame_hdr of ", eh->p_filesz, " bytes"));
  }
  EhFrameTable table;
  table.hdr_address = eh->p_vaddr;
  absl::StatusOr<std::string> hdr = ReadBytes(file, eh->p_offset, eh->p_filesz);
  if (!hdr.ok()) return hdr.status();
  table.hdr = std::move(*hdr);
  const auto* h = reinterpret_cast<const uint8_t*>(table.hdr.data());
  const uint8_t version = h[0], frame_ptr_enc = h[1], count_enc = h[2], table_enc = h[3];
  if (version != 1) return absl::DataLossError(absl::StrCat(".eh_frame_hdr version ", version));
  size_t pos = 4;
  std::optional<uint64_t> frame_address = DecodeField(table.hdr, &pos, frame_ptr_enc, table.hdr_address);
  std::optional<uint64_t> count = DecodeField(table.hdr, &pos, count_enc, table.hdr_address);
  // The only table libunwind (and every linker) uses: pairs of 4-byte
  // offsets from the header's start.
  if (!frame_address.has_value() || !count.has_value() ||
      table_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) {
    return absl::DataLossError(absl::StrCat(".eh_frame_hdr encodings 0x", absl::Hex(frame_ptr_enc),
                                            " 0x", absl::Hex(count_enc), " 0x", absl::Hex(table_enc),
                                            " are not the linkers'"));
  }
  if (*count > (table.hdr.size() - pos) / 8) {
    return absl::DataLossError(absl::StrCat(".eh_frame_hdr claims ", *count, " FDEs in ",
                                            table.hdr.size(), " bytes"));
  }
  table.table_address = table.hdr_address + pos;
  table.fde_count = *count;
  table.frame_address = *frame_address;
  std::optional<std::pair<uint64_t, uint64_t>> extent = EhFrameExtent(elf, *frame_address, phnum);
  if (!extent.has_value()) return absl::DataLossError(".eh_frame lies outside the file");
  absl::StatusOr<std::string> frame =
      ReadBytes(file, extent->first, std::min(extent->second, kMaxEhFrameBytes));
  if (!frame.ok()) return frame.status();
  table.frame = std::move(*frame);
  return table;
}

}  // namespace profcpu::symbolize
