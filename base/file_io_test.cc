#include "base/file_io.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

std::string TempPath(const char* name) {
  return std::string(::testing::TempDir()) + "/" + name;
}

TEST(FileIoTest, WritesAndReadsBack) {
  std::string path = TempPath("file_io_roundtrip");
  ASSERT_TRUE(WriteFile(path, "contents\n").ok());
  auto read = ReadFileBounded(path, 1024);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "contents\n");
}

TEST(FileIoTest, RefusesFilesOverTheLimit) {
  std::string path = TempPath("file_io_big");
  ASSERT_TRUE(WriteFile(path, std::string(1000, 'x')).ok());
  auto read = ReadFileBounded(path, 999);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(FileIoTest, TruncatesWhenAllowed) {
  std::string path = TempPath("file_io_truncate");
  ASSERT_TRUE(WriteFile(path, std::string(1000, 'x')).ok());
  bool truncated = false;
  auto read = ReadFileBounded(path, 10, /*truncate_ok=*/true, &truncated);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->size(), 10u);
  EXPECT_TRUE(truncated);
}

TEST(FileIoTest, MissingFileNamesThePath) {
  auto read = ReadFileBounded("/nonexistent/profcpu/file", 10);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find("/nonexistent/profcpu/file"), absl::string_view::npos);
}

TEST(FileIoTest, StopsAtTheLimitOnEndlessInput) {
  auto read = ReadFileBounded("/dev/zero", 4096, /*truncate_ok=*/true);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->size(), 4096u);
}

}  // namespace
}  // namespace profcpu::base
