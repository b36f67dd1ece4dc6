#include "symbolize/elf_symbols.h"

#include <fcntl.h>

#include <string>

#include "base/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using testing::FixtureLibPath;
using testing::FixtureOffset;
using testing::FixtureStrippedPath;
using ::testing::HasSubstr;

absl::StatusOr<std::unique_ptr<ElfSymbols>> LoadFile(const std::string& path,
                                                     const ElfSymbolLimits& limits = {}) {
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return absl::NotFoundError(path);
  return ElfSymbols::FromFd(fd.get(), path, limits);
}

class ElfSymbolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = LoadFile(FixtureLibPath());
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    symbols_ = std::move(*loaded);
  }
  std::unique_ptr<ElfSymbols> symbols_;
};

TEST_F(ElfSymbolsTest, NamesCFunctionAtFileOffsetFromProgramHeaders) {
  auto match = symbols_->LookupFileOffset(FixtureOffset("fixture_leaf"));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->function, "fixture_leaf");
  EXPECT_EQ(match->offset, 0u);

  match = symbols_->LookupFileOffset(FixtureOffset("fixture_leaf", 3));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->function, "fixture_leaf");
  EXPECT_EQ(match->offset, 3u);
}

TEST_F(ElfSymbolsTest, DemanglesCppFunctionsWithParameters) {
  auto match = symbols_->LookupFileOffset(FixtureOffset("_ZN10fixture_ns6Widget7ComputeEi", 1));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->function, "fixture_ns::Widget::Compute(int)");
  EXPECT_EQ(match->offset, 1u);
}

TEST_F(ElfSymbolsTest, NamesLocalFunctionsFromSymtab) {
  auto* address_of =
      reinterpret_cast<void* (*)()>(testing::FixtureSymbol("fixture_hidden_helper_address"));
  ASSERT_NE(address_of, nullptr);
  auto offset = testing::FileOffsetOf(address_of());
  ASSERT_TRUE(offset.has_value());
  auto match = symbols_->LookupFileOffset(*offset);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->function, "(anonymous namespace)::HiddenHelper(int)");
}

TEST_F(ElfSymbolsTest, ZeroSizedSymbolExtendsToTheNextSymbol) {
  // fixture_asm_nosize has st_size 0 and 8 bytes of code before fixture_asm_next.
  auto match = symbols_->LookupFileOffset(FixtureOffset("fixture_asm_nosize", 5));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->function, "fixture_asm_nosize");
  EXPECT_EQ(match->offset, 5u);

  match = symbols_->LookupFileOffset(FixtureOffset("fixture_asm_next"));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->function, "fixture_asm_next");
  EXPECT_EQ(match->offset, 0u);
}

TEST_F(ElfSymbolsTest, FileOffsetMapsThroughTheLoadSegment) {
  // The fixture is dlopen'ed: its runtime address minus the load bias is the
  // link-time address the symbol table uses.
  uint64_t offset = FixtureOffset("fixture_leaf");
  auto address = symbols_->FileOffsetToAddress(offset);
  ASSERT_TRUE(address.has_value());
  auto direct = symbols_->LookupAddress(*address);
  ASSERT_TRUE(direct.has_value());
  EXPECT_EQ(direct->function, "fixture_leaf");
}

TEST_F(ElfSymbolsTest, OffsetsOutsideEverySegmentAreNotNamed) {
  EXPECT_FALSE(symbols_->FileOffsetToAddress(uint64_t{1} << 40).has_value());
  EXPECT_FALSE(symbols_->LookupFileOffset(uint64_t{1} << 40).has_value());
  EXPECT_FALSE(symbols_->LookupAddress(0).has_value());
}

TEST_F(ElfSymbolsTest, ReadsTheGnuBuildId) {
  // Debian's gcc links with --build-id (a 20-byte SHA-1).
  EXPECT_EQ(symbols_->build_id().size(), 20u);
}

TEST(ElfSymbolsStrippedTest, StillNamesExportedFunctionsFromDynsym) {
  auto loaded = LoadFile(FixtureStrippedPath());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const ElfSymbols& symbols = **loaded;
  // strip keeps the loadable layout, so the unstripped copy's offsets apply.
  auto match = symbols.LookupFileOffset(FixtureOffset("fixture_leaf", 2));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->function, "fixture_leaf");
  EXPECT_EQ(match->offset, 2u);
  match = symbols.LookupFileOffset(FixtureOffset("_ZN10fixture_ns6Widget7ComputeEi"));
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->function, "fixture_ns::Widget::Compute(int)");

  // The local helper was only in .symtab: really stripped.
  auto* address_of =
      reinterpret_cast<void* (*)()>(testing::FixtureSymbol("fixture_hidden_helper_address"));
  ASSERT_NE(address_of, nullptr);
  auto hidden = symbols.LookupFileOffset(*testing::FileOffsetOf(address_of()));
  if (hidden.has_value()) {
    EXPECT_THAT(hidden->function, ::testing::Not(HasSubstr("Hidden")));
  }
}

TEST(ElfSymbolsLimitsTest, SymbolCapTruncatesAndSays) {
  ElfSymbolLimits limits;
  limits.max_symbols = 2;
  auto loaded = LoadFile(FixtureLibPath(), limits);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE((*loaded)->truncated());
  EXPECT_LE((*loaded)->size(), 2u);
}

TEST(ElfSymbolsLimitsTest, NameBytesCapRefusesHugeStringTables) {
  ElfSymbolLimits limits;
  limits.max_name_bytes = 16;
  auto loaded = LoadFile(FixtureLibPath(), limits);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(ElfSymbolsHostileTest, RejectsNonElf) {
  auto loaded = ElfSymbols::FromImage("#!/bin/sh\necho not an ELF file\n", "script");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(loaded.status().message(), HasSubstr("script is not an ELF file"));
  EXPECT_FALSE(ElfSymbols::FromImage("", "empty").ok());
}

TEST(ElfSymbolsHostileTest, RejectsDirectoriesAndFifos) {
  testing::ScratchDir dir;
  auto loaded = LoadFile(dir.path());
  EXPECT_FALSE(loaded.ok());
}

TEST(ElfSymbolsHostileTest, TruncatedFilesFailCleanly) {
  const std::string image = testing::ReadWholeFile(FixtureLibPath());
  ASSERT_GT(image.size(), 1000u);
  testing::ScratchDir dir;
  // Every prefix length up to the headers, then a spread through the file.
  for (size_t size = 0; size < image.size(); size += (size < 256 ? 1 : 97)) {
    std::string path = dir.Write("cut.so", image.substr(0, size));
    auto loaded = LoadFile(path);
    auto from_image = ElfSymbols::FromImage(image.substr(0, size), "cut");
    if (size < 64) {  // not even a whole ELF header
      EXPECT_FALSE(loaded.ok()) << size;
      EXPECT_FALSE(from_image.ok()) << size;
    }
  }
}

TEST(ElfSymbolsHostileTest, CorruptedBytesNeverCrash) {
  const std::string image = testing::ReadWholeFile(FixtureLibPath());
  // Overwrite bytes in the ELF header, program headers and, spread through
  // the rest, the section headers and tables, with values that make offsets
  // and counts huge or tiny. Success or a clean error are both fine; the
  // sanitizer build checks nothing is read out of bounds.
  const char kValues[] = {'\x00', '\x01', '\x7f', '\xff'};
  const uint64_t leaf = FixtureOffset("fixture_leaf");
  for (size_t pos = 0; pos < image.size(); pos += (pos < 512 ? 1 : 61)) {
    for (char value : kValues) {
      std::string corrupt = image;
      corrupt[pos] = value;
      auto loaded = ElfSymbols::FromImage(corrupt, "corrupt");
      if (loaded.ok()) (*loaded)->LookupFileOffset(leaf);
    }
  }
}

TEST(ElfSymbolsHostileTest, MalformedErrorsSaySo) {
  std::string image = testing::ReadWholeFile(FixtureLibPath());
  // e_phoff (offset 32 in ELF64) pointing past the end of the file.
  for (int i = 0; i < 8; ++i) image[32 + i] = '\x7f';
  auto loaded = ElfSymbols::FromImage(image, "bad.so");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(), HasSubstr("malformed ELF file bad.so"));
}

}  // namespace
}  // namespace profcpu::symbolize
