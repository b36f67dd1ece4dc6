#include "symbolize/test_util.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

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
