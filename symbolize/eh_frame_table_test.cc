#include "symbolize/eh_frame_table.h"

#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::symbolize {
namespace {

absl::StatusOr<EhFrameTable> TableOf(const char* path) {
  base::UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  absl::StatusOr<ElfFile> file = ElfFile::Open(std::move(fd), path);
  if (!file.ok()) return file.status();
  return ReadEhFrameTable(*file);
}

// The table's first entry names the lowest function with CFI: its FDE
// (length, CIE pointer) lies inside the .eh_frame read.
TEST(EhFrameTableTest, ReadsTheTableAndTheFdesItPointsAt) {
  absl::StatusOr<EhFrameTable> table = TableOf(FIXTURE_LIB_PATH);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_GT(table->fde_count, 2u);
  uint64_t entry = 0;
  ASSERT_TRUE(table->Read(table->table_address, &entry));
  const int32_t fde_offset = static_cast<int32_t>(entry >> 32);
  const uint64_t fde = table->hdr_address + static_cast<int64_t>(fde_offset);
  uint64_t fde_words = 0;
  ASSERT_TRUE(table->Read(fde, &fde_words));
  EXPECT_GT(static_cast<uint32_t>(fde_words), 8u);         // its length
  EXPECT_NE(static_cast<uint32_t>(fde_words >> 32), 0u);   // a CIE pointer, not a CIE
  EXPECT_FALSE(table->Read(table->frame_address + table->frame.size(), &fde_words));
  // A word sticking out of the section's start: the bytes inside are read.
  uint64_t straddling = 0;
  ASSERT_TRUE(table->Read(table->hdr_address - 4, &straddling));
  uint32_t first = 0;
  std::memcpy(&first, table->hdr.data(), 4);
  EXPECT_EQ(straddling >> 32, first);
}

TEST(EhFrameTableTest, AStrippedFileKeepsItsTable) {
  absl::StatusOr<EhFrameTable> full = TableOf(FIXTURE_LIB_PATH);
  absl::StatusOr<EhFrameTable> stripped = TableOf(FIXTURE_STRIPPED_PATH);
  ASSERT_TRUE(full.ok() && stripped.ok()) << stripped.status();
  EXPECT_EQ(stripped->fde_count, full->fde_count);
  EXPECT_EQ(stripped->frame_address, full->frame_address);
}

// A header whose sizes or encodings lie is refused, never read past.
TEST(EhFrameTableTest, ALyingHeaderIsRefused) {
  absl::StatusOr<std::string> image = base::ReadFileBounded(FIXTURE_LIB_PATH, 64 << 20);
  ASSERT_TRUE(image.ok());
  absl::StatusOr<EhFrameTable> good = TableOf(FIXTURE_LIB_PATH);
  ASSERT_TRUE(good.ok());
  // Where the header lies in the file: find its bytes.
  const size_t at = image->find(good->hdr.substr(0, 16));
  ASSERT_NE(at, std::string::npos);
  struct Patch {
    size_t offset;
    uint8_t value;
  };
  for (Patch patch : {Patch{0, 2}, Patch{3, 0x1b}, Patch{1, 0x0f}, Patch{11, 0x7f}}) {
    std::string copy = *image;
    copy[at + patch.offset] = static_cast<char>(patch.value);
    absl::StatusOr<ElfFile> file = ElfFile::FromImage(absl::MakeSpan(copy), "patched");
    ASSERT_TRUE(file.ok());
    absl::StatusOr<EhFrameTable> table = ReadEhFrameTable(*file);
    EXPECT_FALSE(table.ok()) << "byte " << patch.offset;
  }
}

}  // namespace
}  // namespace profcpu::symbolize
