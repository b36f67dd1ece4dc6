#include "symbolize/dwarf_symbols.h"

#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<DwarfSymbols> Load(const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  EXPECT_TRUE(fd.valid()) << path;
  auto dwarf = DwarfSymbols::FromFd(fd.get(), path);
  EXPECT_TRUE(dwarf.ok()) << dwarf.status();
  return dwarf.ok() ? std::move(*dwarf) : nullptr;
}

// Every DWARF variant the fixtures are built in.
class DwarfVariantTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DwarfVariantTest, InlinedCallIsItsOwnFrameWithLines) {
  const std::string path = testing::SymfixPath(GetParam());
  std::unique_ptr<DwarfSymbols> dwarf = Load(path);
  ASSERT_NE(dwarf, nullptr);
  const uint64_t marker = testing::ElfSymbolValue(path, "symfix_marker_blend");
  ASSERT_NE(marker, 0u);
  std::vector<Frame> frames = dwarf->Lookup(marker);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_THAT(frames[0].function, HasSubstr("symfix::Mixer<unsigned long>::Blend("));
  EXPECT_TRUE(frames[0].inlined);
  EXPECT_EQ(frames[0].line, testing::LineContaining(testing::SymfixSourcePath(),
                                                    "symfix: marker line"));
  EXPECT_THAT(frames[0].source_file, EndsWith("symbols_fixture.cc"));
  EXPECT_THAT(frames[1].function, HasSubstr("symfix::Churn<unsigned long>("));
  EXPECT_FALSE(frames[1].inlined);
  // The outer frame's line is where it called the inlined function.
  EXPECT_EQ(frames[1].line, testing::LineContaining(testing::SymfixSourcePath(),
                                                    "symfix: call site"));
  EXPECT_THAT(frames[1].source_file, EndsWith("symbols_fixture.cc"));
  // Both offsets are from Churn's entry.
  const uint64_t churn = testing::ElfSymbolValue(path, "_ZN6symfix5ChurnImEET_S1_l");
  ASSERT_NE(churn, 0u);
  EXPECT_EQ(frames[0].offset, marker - churn);
  EXPECT_EQ(frames[1].offset, marker - churn);
}

TEST_P(DwarfVariantTest, PlainFunctionIsOneFrame) {
  const std::string path = testing::SymfixPath(GetParam());
  std::unique_ptr<DwarfSymbols> dwarf = Load(path);
  ASSERT_NE(dwarf, nullptr);
  const uint64_t outer = testing::ElfSymbolValue(path, "_ZN6symfix5OuterEl");
  ASSERT_NE(outer, 0u);
  std::vector<Frame> frames = dwarf->Lookup(outer);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "symfix::Outer(long)");
  EXPECT_FALSE(frames[0].inlined);
  EXPECT_EQ(frames[0].offset, 0u);
  EXPECT_GT(frames[0].line, 0u);
}

TEST_P(DwarfVariantTest, AddressOutsideEveryUnitIsEmpty) {
  std::unique_ptr<DwarfSymbols> dwarf = Load(testing::SymfixPath(GetParam()));
  ASSERT_NE(dwarf, nullptr);
  EXPECT_TRUE(dwarf->Lookup(0).empty());
  EXPECT_TRUE(dwarf->Lookup(UINT64_MAX).empty());
}

INSTANTIATE_TEST_SUITE_P(Variants, DwarfVariantTest,
                         ::testing::Values("symfix_dwarf5", "symfix_dwarf4", "symfix_gz",
                                           "symfix_stripped.dbg", "symfix_nofp"));

// Guards the fixtures themselves: the variants are what their names say.
TEST(DwarfSymbolsTest, VariantsReallyDiffer) {
  // The version of the fixture's own unit (an instrumented build links
  // runtime objects whose units come first).
  auto unit_version = [](const std::string& name) {
    base::UniqueFd fd(::open(testing::SymfixPath(name).c_str(), O_RDONLY | O_CLOEXEC));
    Dwarf* dwarf = dwarf_begin(fd.get(), DWARF_C_READ);
    Dwarf_Half found = 0;
    Dwarf_CU* cu = nullptr;
    Dwarf_CU* next = nullptr;
    Dwarf_Half version = 0;
    uint8_t type;
    Dwarf_Die cudie, subdie;
    while (dwarf != nullptr &&
           dwarf_get_units(dwarf, cu, &next, &version, &type, &cudie, &subdie) == 0) {
      cu = next;
      const char* unit_name = dwarf_diename(&cudie);
      if (unit_name != nullptr && std::string(unit_name).find("symbols_fixture.cc") !=
                                      std::string::npos) {
        found = version;
      }
    }
    dwarf_end(dwarf);
    return found;
  };
  EXPECT_EQ(unit_version("symfix_dwarf4"), 4);
  EXPECT_EQ(unit_version("symfix_dwarf5"), 5);
  EXPECT_EQ(unit_version("symfix_gz"), 5);
  // -gz: .debug_info is SHF_COMPRESSED.
  base::UniqueFd fd(::open(testing::SymfixPath("symfix_gz").c_str(), O_RDONLY | O_CLOEXEC));
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd.get(), ELF_C_READ, nullptr);
  size_t shstrndx = 0;
  ASSERT_EQ(elf_getshdrstrndx(elf, &shstrndx), 0);
  bool compressed = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name != nullptr && std::string(name) == ".debug_info") {
      compressed = (shdr.sh_flags & SHF_COMPRESSED) != 0;
    }
  }
  elf_end(elf);
  EXPECT_TRUE(compressed);
}

TEST(DwarfSymbolsTest, FileWithoutDwarfIsNotFound) {
  const std::string path = testing::SymfixPath("symfix_stripped");
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto dwarf = DwarfSymbols::FromFd(fd.get(), path);
  ASSERT_FALSE(dwarf.ok());
  EXPECT_EQ(dwarf.status().code(), absl::StatusCode::kNotFound);
}

// A file with more DWARF than the bound is refused before libdw reads it
// (the fleet agent's cap on what naming one module may hold); within the
// bound it is read as always.
TEST(DwarfSymbolsTest, DwarfOverTheByteBoundIsRefused) {
  const std::string path = testing::SymfixPath("symfix_dwarf5");
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  DwarfLimits limits;
  limits.max_section_bytes = 1;
  auto refused = DwarfSymbols::FromFd(fd.get(), path, limits);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("ELF symbol tables only"));

  limits.max_section_bytes = 64 << 20;
  auto read = DwarfSymbols::FromFd(fd.get(), path, limits);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE((*read)->Lookup(testing::ElfSymbolValue(path, "symfix_marker_blend")).empty());
}

TEST(DwarfSymbolsTest, NotElfIsAnError) {
  testing::ScratchDir dir;
  std::string path = dir.Write("x", "not an ELF file at all");
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  EXPECT_FALSE(DwarfSymbols::FromFd(fd.get(), path).ok());
}

// Corrupt DWARF (every byte of .debug_info flipped in turn at a stride)
// must never crash or hang a lookup.
TEST(DwarfSymbolsTest, CorruptDebugInfoDoesNotCrash) {
  const std::string original = testing::ReadWholeFile(testing::SymfixPath("symfix_dwarf5"));
  const uint64_t marker =
      testing::ElfSymbolValue(testing::SymfixPath("symfix_dwarf5"), "symfix_marker_blend");
  testing::ScratchDir dir;
  for (size_t stride_start = 0; stride_start < 64; stride_start += 7) {
    std::string bytes = original;
    // Damage the second half of the file, where the debug sections are.
    for (size_t i = bytes.size() / 2 + stride_start; i < bytes.size(); i += 61) bytes[i] ^= 0x5a;
    std::string path = dir.Write(absl::StrCat("corrupt", stride_start), bytes);
    base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    auto dwarf = DwarfSymbols::FromFd(fd.get(), path);
    if (!dwarf.ok()) continue;
    (void)(*dwarf)->Lookup(marker);
    for (uint64_t a = marker - 64; a < marker + 64; ++a) (void)(*dwarf)->Lookup(a);
  }
}

// binutils' addr2line is an independent reader of the same DWARF: for every
// byte of Churn, the inline chain depth and each frame's line must agree.
TEST(DwarfSymbolsTest, AgreesWithAddr2lineAcrossAFunction) {
  const std::string path = testing::SymfixPath("symfix_dwarf5");
  std::unique_ptr<DwarfSymbols> dwarf = Load(path);
  ASSERT_NE(dwarf, nullptr);
  const uint64_t churn = testing::ElfSymbolValue(path, "_ZN6symfix5ChurnImEET_S1_l");
  const uint64_t middle = testing::ElfSymbolValue(path, "_ZN6symfix6MiddleEl");
  ASSERT_NE(churn, 0u);
  ASSERT_NE(middle, 0u);
  // Churn's bytes (it has no successor closer than Middle in this layout, or
  // the other way round; take the gap after whichever comes first).
  const uint64_t begin = churn;
  const uint64_t end = middle > churn ? std::min<uint64_t>(middle, churn + 256) : churn + 64;
  std::string addresses;
  for (uint64_t a = begin; a < end; ++a) absl::StrAppend(&addresses, absl::Hex(a), " ");
  std::string command = absl::StrCat("addr2line -i -e ", path, " ", addresses);
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  ASSERT_EQ(::pclose(pipe), 0) << "addr2line (binutils) must be installed";
  // addr2line -i prints one line per frame, innermost first; a new address
  // starts where we cannot tell, so compare the concatenated line numbers.
  std::vector<uint32_t> theirs;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipEmpty())) {
    absl::string_view location = line.substr(0, line.find(" (discriminator"));
    uint32_t number = 0;
    size_t colon = location.rfind(':');
    if (colon != absl::string_view::npos) {
      (void)absl::SimpleAtoi(location.substr(colon + 1), &number);
    }
    theirs.push_back(number);
  }
  std::vector<uint32_t> ours;
  size_t inlined_addresses = 0;
  for (uint64_t a = begin; a < end; ++a) {
    std::vector<Frame> frames = dwarf->Lookup(a);
    if (frames.empty()) {
      ours.push_back(0);
      continue;
    }
    if (frames.size() > 1) ++inlined_addresses;
    for (const Frame& f : frames) ours.push_back(f.line);
  }
  EXPECT_EQ(ours, theirs);
  EXPECT_GT(inlined_addresses, 0u) << "the fixture's inlined call was not seen";
}

}  // namespace
}  // namespace profcpu::symbolize
