#include "symbolize/load_layout.h"

#include <fcntl.h>

#include <algorithm>
#include <optional>
#include <string>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "symbolize/elf_file.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

TEST(LoadLayoutTest, PlacesASharedLibrary) {
  const std::string path = testing::FixtureLibPath();
  absl::StatusOr<ElfFile> file =
      ElfFile::Open(base::UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), path);
  ASSERT_TRUE(file.ok()) << file.status();
  LoadLayout layout = ReadLoadLayout(file->get());
  ASSERT_TRUE(layout.usable);
  EXPECT_FALSE(layout.exec);  // ET_DYN: placed wherever the loader put it
  EXPECT_LT(layout.first_vaddr, layout.end_vaddr);
  EXPECT_TRUE(std::any_of(layout.segments.begin(), layout.segments.end(),
                          [](const LoadSegment& s) { return s.executable; }));
  // A function's file offset maps back to its link-time address.
  const uint64_t address = testing::ElfSymbolValue(path, "fixture_leaf");
  ASSERT_NE(address, 0u);
  std::optional<uint64_t> offset = testing::ElfAddressToOffset(path, address);
  ASSERT_TRUE(offset.has_value());
  EXPECT_EQ(FileOffsetToAddress(layout.segments, *offset), address);
}

TEST(LoadLayoutTest, AnElfWithoutProgramHeadersIsNotUsable) {
  // An ELF header alone, as the smallest relocatable object would have.
  std::string image(64, '\0');
  image.replace(0, 4, "\x7f" "ELF");
  image[4] = 2;   // ELFCLASS64
  image[5] = 1;   // ELFDATA2LSB
  image[6] = 1;   // EV_CURRENT
  image[16] = 1;  // ET_REL
  image[18] = 62; // EM_X86_64
  image[20] = 1;  // e_version
  image[52] = 64; // e_ehsize
  absl::StatusOr<ElfFile> file = ElfFile::FromImage(absl::MakeSpan(image), "header only");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_FALSE(ReadLoadLayout(file->get()).usable);
}

}  // namespace
}  // namespace profcpu::symbolize
