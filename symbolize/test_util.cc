#include "symbolize/test_util.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "symbolize/elf_file.h"

namespace profcpu::symbolize::testing {
namespace {

struct Search {
  uintptr_t address = 0;
  std::optional<uint64_t> offset;
};

int FindOffset(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_LOAD) continue;
    uintptr_t vaddr = search->address - info->dlpi_addr;
    if (vaddr >= phdr.p_vaddr && vaddr - phdr.p_vaddr < phdr.p_filesz) {
      search->offset = vaddr - phdr.p_vaddr + phdr.p_offset;
      return 1;
    }
  }
  return 0;
}

}  // namespace

const char* FixtureLibPath() { return FIXTURE_LIB_PATH; }
const char* FixtureStrippedPath() { return FIXTURE_STRIPPED_PATH; }

void* FixtureSymbol(const char* name) {
  static void* handle = dlopen(FixtureLibPath(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    ADD_FAILURE() << "dlopen " << FixtureLibPath() << ": " << dlerror();
    return nullptr;
  }
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) ADD_FAILURE() << "fixture has no symbol " << name;
  return symbol;
}

std::optional<uint64_t> FileOffsetOf(const void* address) {
  Search search;
  search.address = reinterpret_cast<uintptr_t>(address);
  dl_iterate_phdr(&FindOffset, &search);
  return search.offset;
}

uint64_t FixtureOffset(const char* name, uint64_t delta) {
  void* symbol = FixtureSymbol(name);
  if (symbol == nullptr) return 0;
  std::optional<uint64_t> offset = FileOffsetOf(symbol);
  if (!offset.has_value()) {
    ADD_FAILURE() << name << " is in no loaded object";
    return 0;
  }
  return *offset + delta;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string SymfixPath(absl::string_view name) { return absl::StrCat(SYMFIX_DIR, "/", name); }
std::string SymfixSourcePath() { return SYMFIX_SOURCE; }

namespace {

// Calls `fn(elf)` with the ELF file at `path` open, or does nothing.
template <typename Fn>
void WithElf(const std::string& path, Fn fn) {
  elf_version(EV_CURRENT);
  base::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    ADD_FAILURE() << "open " << path;
    return;
  }
  ElfPtr elf(elf_begin(fd.get(), ELF_C_READ, nullptr));
  if (elf != nullptr) fn(elf.get());
}

}  // namespace

uint64_t ElfSymbolValue(const std::string& path, absl::string_view name) {
  uint64_t value = 0;
  WithElf(path, [&](Elf* elf) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_SYMTAB) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      for (size_t i = 0; data != nullptr && i < shdr.sh_size / shdr.sh_entsize; ++i) {
        GElf_Sym sym;
        if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
        const char* n = elf_strptr(elf, shdr.sh_link, sym.st_name);
        if (n != nullptr && name == n) value = sym.st_value;
      }
    }
  });
  return value;
}

std::optional<uint64_t> ElfAddressToOffset(const std::string& path, uint64_t address) {
  std::optional<uint64_t> offset;
  WithElf(path, [&](Elf* elf) {
    size_t count = 0;
    elf_getphdrnum(elf, &count);
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) {
        continue;
      }
      if (address >= phdr.p_vaddr && address - phdr.p_vaddr < phdr.p_filesz) {
        offset = address - phdr.p_vaddr + phdr.p_offset;
      }
    }
  });
  return offset;
}

uint32_t LineContaining(const std::string& path, absl::string_view needle) {
  std::ifstream in(path);
  std::string line;
  for (uint32_t number = 1; std::getline(in, line); ++number) {
    if (line.find(std::string(needle)) != std::string::npos) return number;
  }
  return 0;
}

std::string ElfBuildId(const std::string& path) {
  std::string id;
  WithElf(path, [&](Elf* elf) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      size_t pos = 0, name_pos = 0, desc_pos = 0;
      GElf_Nhdr nhdr;
      while (data != nullptr &&
             (pos = gelf_getnote(data, pos, &nhdr, &name_pos, &desc_pos)) > 0) {
        if (nhdr.n_type == NT_GNU_BUILD_ID) {
          id.assign(static_cast<const char*>(data->d_buf) + desc_pos, nhdr.n_descsz);
        }
      }
    }
  });
  return id;
}

ScratchDir::ScratchDir() {
  std::string pattern = absl::StrCat(::testing::TempDir(), "/symbolize_test_XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << pattern;
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::Write(absl::string_view relative, absl::string_view contents) const {
  std::filesystem::path full = std::filesystem::path(path_) / std::string(relative);
  std::filesystem::create_directories(full.parent_path());
  std::ofstream out(full, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) ADD_FAILURE() << "write " << full;
  return full.string();
}

void ScratchDir::Symlink(absl::string_view relative, absl::string_view target) const {
  std::filesystem::path full = std::filesystem::path(path_) / std::string(relative);
  std::filesystem::create_directories(full.parent_path());
  if (symlink(std::string(target).c_str(), full.c_str()) != 0) {
    ADD_FAILURE() << "symlink " << full << " -> " << target;
  }
}

}  // namespace profcpu::symbolize::testing
