// Test support for the symbolize tests: the fixture library built from
// testdata/fixture_lib.cc, and scratch directories that act as a target's root.
#ifndef PROFCPU_SYMBOLIZE_TEST_UTIL_H_
#define PROFCPU_SYMBOLIZE_TEST_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace profcpu::symbolize::testing {

// Paths of the fixture library and of its stripped copy (.dynsym only).
const char* FixtureLibPath();
const char* FixtureStrippedPath();

// The address of an exported fixture symbol (the library is dlopen'ed once
// and kept loaded). Fails the test (ADD_FAILURE) and returns null if absent.
void* FixtureSymbol(const char* name);

// The file offset a sampled address would be normalized to, computed the way
// the ELF's own program headers say (dl_iterate_phdr: the PT_LOAD holding it,
// offset = vaddr - p_vaddr + p_offset). nullopt if no loaded object holds it.
std::optional<uint64_t> FileOffsetOf(const void* address);

// FileOffsetOf(FixtureSymbol(name)) plus `delta`; 0 after a test failure.
uint64_t FixtureOffset(const char* name, uint64_t delta = 0);

std::string ReadWholeFile(const std::string& path);

// The symbols fixtures (tests/fixtures/symbols): "symfix_dwarf5" ->
// BUILD/tests/fixtures/symbols/symfix_dwarf5, and the fixture's source.
std::string SymfixPath(absl::string_view name);
std::string SymfixSourcePath();

// The value of any .symtab symbol (functions, marker labels) of an ELF file,
// read with libelf independently of the code under test; 0 if absent.
uint64_t ElfSymbolValue(const std::string& path, absl::string_view name);
// The file offset of a link-time address through the file's PT_LOAD headers.
std::optional<uint64_t> ElfAddressToOffset(const std::string& path, uint64_t address);
// The 1-based number of the first line of `path` containing `needle`; 0 if none.
uint32_t LineContaining(const std::string& path, absl::string_view needle);
// The raw GNU build-id of an ELF file ("" if none), read with libelf.
std::string ElfBuildId(const std::string& path);

// A fresh directory under the test's temp dir, removed (recursively) on
// destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `relative` (parents created) and returns its absolute path.
  std::string Write(absl::string_view relative, absl::string_view contents) const;
  // Creates a symlink `relative` -> `target` (target taken literally).
  void Symlink(absl::string_view relative, absl::string_view target) const;

 private:
  std::string path_;
};

}  // namespace profcpu::symbolize::testing

#endif  // PROFCPU_SYMBOLIZE_TEST_UTIL_H_
