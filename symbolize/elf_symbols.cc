#include "symbolize/elf_symbols.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/status_macros.h"
#include "symbolize/demangle.h"
#include "symbolize/elf_file.h"
#include "symbolize/symbol_aliases.h"

namespace profcpu::symbolize {
namespace {

// Program headers and sections a sane file has far fewer of; the caps keep a
// hostile e_phnum/e_shnum (extended numbering allows 2^32) from costing time.
constexpr size_t kMaxProgramHeaders = 1 << 16;
constexpr size_t kMaxSections = 1 << 20;
constexpr uint64_t kMaxNoteBytes = 1 << 16;

// [offset, offset + size) lies inside a file of `file_size` bytes.
bool InFile(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

// A function symbol before merging, with what decides between aliases.
struct Candidate {
  uint64_t address = 0;
  uint64_t size = 0;
  uint32_t name_offset = 0;
  uint32_t name_length = 0;
  uint8_t table_rank = 0;  // 0 .symtab, 1 .dynsym
  uint8_t binding = 0;     // STB_*
};

}  // namespace

class ElfSymbols::Loader {
 public:
  Loader(Elf* elf, uint64_t file_size, absl::string_view what, const ElfSymbolLimits& limits,
         ElfSymbols* out)
      : elf_(elf), file_size_(file_size), what_(what), limits_(limits), out_(out) {}

  // Only the build-id, from the PT_NOTE segments: "" when there is none or
  // the file is not ELF.
  std::string BuildIdOnly() {
    GElf_Ehdr ehdr;
    size_t count = 0;
    if (elf_kind(elf_) != ELF_K_ELF || gelf_getehdr(elf_, &ehdr) == nullptr ||
        elf_getphdrnum(elf_, &count) != 0 || count > kMaxProgramHeaders ||
        !InFile(ehdr.e_phoff, uint64_t{count} * ehdr.e_phentsize, file_size_)) {
      return "";
    }
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr) return "";
      if (phdr.p_type == PT_NOTE) notes_.push_back({phdr.p_offset, phdr.p_filesz, phdr.p_align});
    }
    ReadBuildId();
    return out_->build_id_;
  }

  absl::Status Run() {
    if (elf_kind(elf_) != ELF_K_ELF) {
      return absl::InvalidArgumentError(absl::StrCat(what_, " is not an ELF file"));
    }
    GElf_Ehdr ehdr;
    if (gelf_getehdr(elf_, &ehdr) == nullptr) return Malformed("ELF header");
    if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN) {
      return absl::InvalidArgumentError(
          absl::StrCat(what_, " is not an executable or shared object (e_type ", ehdr.e_type, ")"));
    }
    PROFCPU_RETURN_IF_ERROR(ReadSegments(ehdr));
    PROFCPU_RETURN_IF_ERROR(ReadSymbolTables(ehdr));
    ReadBuildId();
    Merge();
    return absl::OkStatus();
  }

 private:
  absl::Status Malformed(absl::string_view part) const {
    return absl::DataLossError(
        absl::StrCat("malformed ELF file ", what_, ": bad ", part, " (", elf_errmsg(-1), ")"));
  }

  absl::Status ReadSegments(const GElf_Ehdr& ehdr) {
    size_t count = 0;
    if (elf_getphdrnum(elf_, &count) != 0) return Malformed("program header count");
    if (count > kMaxProgramHeaders ||
        !InFile(ehdr.e_phoff, uint64_t{count} * ehdr.e_phentsize, file_size_) ||
        (count > 0 && ehdr.e_phentsize != gelf_fsize(elf_, ELF_T_PHDR, 1, EV_CURRENT))) {
      return Malformed("program header table");
    }
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr) {
        return Malformed("program header");
      }
      if (phdr.p_type == PT_NOTE) notes_.push_back({phdr.p_offset, phdr.p_filesz, phdr.p_align});
      if (phdr.p_type != PT_LOAD) continue;
      out_->segments_.push_back(
          {phdr.p_offset, phdr.p_filesz, phdr.p_vaddr, phdr.p_memsz, (phdr.p_flags & PF_X) != 0});
      out_->load_segments_.push_back(
          {phdr.p_offset, phdr.p_filesz, phdr.p_vaddr, (phdr.p_flags & PF_X) != 0});
    }
    if (out_->segments_.empty()) {
      return absl::DataLossError(absl::StrCat(what_, " has no loadable segment"));
    }
    return absl::OkStatus();
  }

  absl::Status ReadSymbolTables(const GElf_Ehdr& ehdr) {
    size_t count = 0;
    if (elf_getshdrnum(elf_, &count) != 0) return Malformed("section count");
    if (count == 0) return absl::OkStatus();  // no sections: nothing to name
    if (count > kMaxSections ||
        !InFile(ehdr.e_shoff, uint64_t{count} * ehdr.e_shentsize, file_size_) ||
        ehdr.e_shentsize != gelf_fsize(elf_, ELF_T_SHDR, 1, EV_CURRENT)) {
      return Malformed("section header table");
    }
    Elf_Scn* symtab = nullptr;
    Elf_Scn* dynsym = nullptr;
    size_t shstrndx = 0;
    const bool have_names = elf_getshdrstrndx(elf_, &shstrndx) == 0;
    for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr; scn = elf_nextscn(elf_, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) return Malformed("section header");
      if (shdr.sh_type == SHT_SYMTAB && symtab == nullptr) symtab = scn;
      if (shdr.sh_type == SHT_DYNSYM && dynsym == nullptr) dynsym = scn;
      if (shdr.sh_type == SHT_NOTE) {
        notes_.push_back({shdr.sh_offset, shdr.sh_size, shdr.sh_addralign});
      }
      const char* name = have_names ? elf_strptr(elf_, shstrndx, shdr.sh_name) : nullptr;
      if (name == nullptr) continue;
      absl::string_view section(name);
      if ((section == ".debug_info" || section == ".zdebug_info") &&
          shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0) {
        out_->has_dwarf_ = true;
      }
      if (section == ".gnu_debuglink" && shdr.sh_type != SHT_NOBITS) ReadDebugLink(shdr);
    }
    out_->has_symtab_ = symtab != nullptr;
    // .symtab first: its entries outrank .dynsym's at the same address.
    if (symtab != nullptr) PROFCPU_RETURN_IF_ERROR(ReadTable(symtab, /*rank=*/0));
    if (dynsym != nullptr) PROFCPU_RETURN_IF_ERROR(ReadTable(dynsym, /*rank=*/1));
    return absl::OkStatus();
  }

  absl::Status ReadTable(Elf_Scn* scn, uint8_t rank) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) return Malformed("symbol table header");
    const size_t entry_size = gelf_fsize(elf_, ELF_T_SYM, 1, EV_CURRENT);
    if (shdr.sh_entsize != entry_size || !InFile(shdr.sh_offset, shdr.sh_size, file_size_)) {
      return Malformed("symbol table");
    }
    uint64_t count = shdr.sh_size / entry_size;
    if (count > limits_.max_symbols) {
      count = limits_.max_symbols;
      out_->truncated_ = true;
    }
    if (count == 0) return absl::OkStatus();

    Elf_Scn* strscn = elf_getscn(elf_, shdr.sh_link);
    GElf_Shdr strshdr;
    if (strscn == nullptr || gelf_getshdr(strscn, &strshdr) == nullptr ||
        strshdr.sh_type != SHT_STRTAB || !InFile(strshdr.sh_offset, strshdr.sh_size, file_size_)) {
      return Malformed("symbol string table");
    }
    if (strshdr.sh_size > limits_.max_name_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(what_, ": symbol string table of ", strshdr.sh_size,
                       " bytes exceeds the limit of ", limits_.max_name_bytes));
    }
    // Raw chunks (rather than elf_getdata) read only the bytes asked for,
    // already bounds-checked above, and convert byte order for ELF_T_SYM.
    Elf_Data* syms = elf_getdata_rawchunk(elf_, static_cast<int64_t>(shdr.sh_offset),
                                          count * entry_size, ELF_T_SYM);
    Elf_Data* strs = elf_getdata_rawchunk(elf_, static_cast<int64_t>(strshdr.sh_offset),
                                          strshdr.sh_size, ELF_T_BYTE);
    if (syms == nullptr || (strs == nullptr && strshdr.sh_size > 0)) {
      return Malformed("symbol table data");
    }
    absl::string_view strings =
        strs == nullptr ? absl::string_view()
                        : absl::string_view(static_cast<const char*>(strs->d_buf), strs->d_size);

    for (uint64_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(syms, static_cast<int>(i), &sym) == nullptr) break;
      int type = GELF_ST_TYPE(sym.st_info);
      if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
      if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strings.size()) continue;
      absl::string_view rest = strings.substr(sym.st_name);
      size_t length = rest.find('\0');
      if (length == absl::string_view::npos || length == 0) continue;  // unterminated/empty
      if (candidates_.size() >= limits_.max_symbols ||
          out_->names_.size() + length > limits_.max_name_bytes) {
        out_->truncated_ = true;
        break;
      }
      Candidate c;
      c.address = sym.st_value;
      c.size = sym.st_size;
      c.name_offset = static_cast<uint32_t>(out_->names_.size());
      c.name_length = static_cast<uint32_t>(length);
      c.table_rank = rank;
      c.binding = static_cast<uint8_t>(GELF_ST_BIND(sym.st_info));
      out_->names_.append(rest.data(), length);
      candidates_.push_back(c);
    }
    return absl::OkStatus();
  }

  // .gnu_debuglink: a NUL-terminated file name, zero padding to a multiple of
  // 4, then the CRC-32 in the file's byte order (GDB manual, "Debugging
  // Information in Separate Files"). A name with a '/' (or "." / "..") could
  // walk out of the directory it is looked up in, so it is ignored.
  void ReadDebugLink(const GElf_Shdr& shdr) {
    constexpr uint64_t kMaxDebugLinkBytes = 4096;
    if (shdr.sh_size < 8 || shdr.sh_size > kMaxDebugLinkBytes ||
        !InFile(shdr.sh_offset, shdr.sh_size, file_size_)) {
      return;
    }
    Elf_Data* data = elf_getdata_rawchunk(elf_, static_cast<int64_t>(shdr.sh_offset),
                                          shdr.sh_size, ELF_T_BYTE);
    if (data == nullptr) return;
    absl::string_view bytes(static_cast<const char*>(data->d_buf), data->d_size);
    size_t nul = bytes.find('\0');
    if (nul == absl::string_view::npos || nul == 0) return;
    size_t crc_at = (nul + 4) & ~size_t{3};
    if (crc_at + 4 > bytes.size()) return;
    absl::string_view name = bytes.substr(0, nul);
    if (name.find('/') != absl::string_view::npos || name == "." || name == "..") return;
    // Convert the CRC from the file's byte order, as ELF_T_WORD does.
    Elf_Data* word = elf_getdata_rawchunk(elf_, static_cast<int64_t>(shdr.sh_offset + crc_at), 4,
                                          ELF_T_WORD);
    if (word == nullptr || word->d_size < 4) return;
    uint32_t crc;
    std::memcpy(&crc, word->d_buf, sizeof(crc));
    out_->debug_link_ = DebugLink{std::string(name), crc};
  }

  // The GNU build-id note (ELF gABI notes; binutils --build-id), from PT_NOTE
  // segments or SHT_NOTE sections. Absent or malformed notes are not errors.
  void ReadBuildId() {
    for (const Note& note : notes_) {
      if (note.size == 0 || note.size > kMaxNoteBytes ||
          !InFile(note.offset, note.size, file_size_)) {
        continue;
      }
      // Notes in 8-aligned segments (.note.gnu.property) pad to 8 bytes.
      Elf_Data* data = elf_getdata_rawchunk(elf_, static_cast<int64_t>(note.offset), note.size,
                                            note.align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
      if (data == nullptr) continue;
      size_t pos = 0;
      GElf_Nhdr nhdr;
      size_t name_pos = 0;
      size_t desc_pos = 0;
      while (pos < data->d_size &&
             (pos = gelf_getnote(data, pos, &nhdr, &name_pos, &desc_pos)) > 0) {
        const char* base = static_cast<const char*>(data->d_buf);
        if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
            std::memcmp(base + name_pos, "GNU", 4) == 0 && nhdr.n_descsz > 0) {
          out_->build_id_.assign(base + desc_pos, nhdr.n_descsz);
          return;
        }
      }
    }
  }

  // One symbol per address, chosen as perf does among aliases
  // (tools/perf/util/symbol.c, choose_best_symbol) after our own rule that
  // .symtab beats .dynsym: sized over zero-sized, non-weak over weak, global
  // over local, fewer leading underscores, longer name.
  void Merge() {
    auto key = [this](const Candidate& c) {
      absl::string_view name = absl::string_view(out_->names_).substr(c.name_offset, c.name_length);
      return std::make_tuple(c.table_rank, c.size == 0, c.binding == STB_WEAK,
                             c.binding != STB_GLOBAL, LeadingUnderscores(name),
                             -static_cast<int64_t>(name.size()), name);
    };
    std::sort(candidates_.begin(), candidates_.end(),
              [&key](const Candidate& a, const Candidate& b) {
                if (a.address != b.address) return a.address < b.address;
                return key(a) < key(b);
              });
    std::vector<Symbol>& symbols = out_->symbols_;
    std::vector<uint64_t> sizes;
    for (const Candidate& c : candidates_) {
      if (!symbols.empty() && symbols.back().address == c.address) continue;
      symbols.push_back({c.address, 0, c.name_offset, c.name_length});
      sizes.push_back(c.size);
    }
    candidates_.clear();
    candidates_.shrink_to_fit();
    for (size_t i = 0; i < symbols.size(); ++i) {
      Symbol& s = symbols[i];
      if (sizes[i] > 0) {
        s.end = SaturatingAdd(s.address, sizes[i]);
        continue;
      }
      // Zero-sized (hand-written assembly): up to the next symbol, but not past
      // the end of its segment; perf rounds the last one up to a page.
      uint64_t end = i + 1 < symbols.size()
                         ? symbols[i + 1].address
                         : SaturatingAdd(s.address / kPageSize * kPageSize, 2 * kPageSize);
      for (const Segment& segment : out_->segments_) {
        if (s.address >= segment.address && s.address - segment.address < segment.memory_size) {
          end = std::min(end, SaturatingAdd(segment.address, segment.memory_size));
        }
      }
      s.end = std::max(end, SaturatingAdd(s.address, 1));
    }
  }

  Elf* elf_;
  uint64_t file_size_;
  absl::string_view what_;
  const ElfSymbolLimits& limits_;
  ElfSymbols* out_;
  std::vector<Candidate> candidates_;
  struct Note {
    uint64_t offset = 0;
    uint64_t size = 0;
    uint64_t align = 0;
  };
  std::vector<Note> notes_;
};

absl::StatusOr<std::unique_ptr<ElfSymbols>> ElfSymbols::FromFd(int fd, absl::string_view what,
                                                               const ElfSymbolLimits& limits) {
  if (!LibelfReady()) return absl::InternalError("libelf: elf_version failed");
  struct stat st;
  if (::fstat(fd, &st) != 0) return base::ErrnoStatus(errno, absl::StrCat("stat ", what));
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(what, " is not a regular file"));
  }
  // ELF_C_READ reads what is asked for with pread; ELF_C_READ_MMAP would
  // crash us with SIGBUS if the target truncated the file while we read it.
  ElfPtr elf(elf_begin(fd, ELF_C_READ, nullptr));
  if (elf == nullptr) {
    return absl::DataLossError(absl::StrCat("read ELF ", what, ": ", elf_errmsg(-1)));
  }
  std::unique_ptr<ElfSymbols> out(new ElfSymbols());
  Loader loader(elf.get(), static_cast<uint64_t>(st.st_size), what, limits, out.get());
  PROFCPU_RETURN_IF_ERROR(loader.Run());
  return out;
}

std::string ElfSymbols::ReadBuildIdNote(int fd) {
  if (!LibelfReady()) return "";
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "";
  ElfPtr elf(elf_begin(fd, ELF_C_READ, nullptr));
  if (elf == nullptr) return "";
  ElfSymbols scratch;
  Loader loader(elf.get(), static_cast<uint64_t>(st.st_size), "", {}, &scratch);
  return loader.BuildIdOnly();
}

absl::StatusOr<std::unique_ptr<ElfSymbols>> ElfSymbols::FromImage(absl::string_view image,
                                                                  absl::string_view what,
                                                                  const ElfSymbolLimits& limits) {
  if (!LibelfReady()) return absl::InternalError("libelf: elf_version failed");
  // elf_memory wants a mutable buffer; a private copy also means libelf never
  // touches the caller's memory (the vdso is mapped read-only).
  std::string copy(image);
  ElfPtr elf(elf_memory(copy.data(), copy.size()));
  if (elf == nullptr) {
    return absl::DataLossError(absl::StrCat("read ELF ", what, ": ", elf_errmsg(-1)));
  }
  std::unique_ptr<ElfSymbols> out(new ElfSymbols());
  Loader loader(elf.get(), copy.size(), what, limits, out.get());
  PROFCPU_RETURN_IF_ERROR(loader.Run());
  return out;  // everything kept was copied out of `copy` before elf_end
}

std::optional<uint64_t> FileOffsetToAddress(const std::vector<LoadSegment>& segments,
                                            uint64_t file_offset) {
  for (bool executable : {true, false}) {
    for (const LoadSegment& s : segments) {
      if (s.executable != executable) continue;
      if (file_offset >= s.file_offset && file_offset - s.file_offset < s.file_size) {
        return file_offset - s.file_offset + s.address;
      }
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ElfSymbols::FileOffsetToAddress(uint64_t file_offset) const {
  return symbolize::FileOffsetToAddress(load_segments_, file_offset);
}

std::optional<SymbolMatch> ElfSymbols::LookupAddress(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return std::nullopt;
  --it;
  // A symbol nested inside a bigger one (a local label with a size) can hide
  // the outer function past its own end; perf has the same limitation.
  if (address >= it->end) return std::nullopt;
  return SymbolMatch{Demangle(NameOf(*it)), address - it->address};
}

std::optional<SymbolMatch> ElfSymbols::LookupFileOffset(uint64_t file_offset) const {
  std::optional<uint64_t> address = FileOffsetToAddress(file_offset);
  if (!address.has_value()) return std::nullopt;
  return LookupAddress(*address);
}

}  // namespace profcpu::symbolize
