#include "base/direct_file_writer.h"

#include <sys/stat.h>

#include <string>

#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

std::string DirectTestPath(const char* name) {
  return std::string(::testing::TempDir()) + "/" + name;
}

// Text whose pieces straddle the writer's blocks and alignment at odd places.
std::string TextPieces(size_t total) {
  std::string text;
  for (size_t i = 0; text.size() < total; ++i) {
    text.append(i % 997 + 1, static_cast<char>('a' + i % 26));
    text.push_back('\n');
  }
  text.resize(total);
  return text;
}

std::string DirectReadBack(const std::string& path) {
  auto read = ReadFileBounded(path, 64 << 20);
  EXPECT_TRUE(read.ok()) << read.status();
  return read.ok() ? *read : std::string();
}

TEST(DirectFileWriterTest, WritesEveryByteInOrder) {
  // Empty, shorter than the alignment, exactly blocks, blocks and a tail.
  for (size_t size : {size_t{0}, size_t{100}, size_t{4096}, size_t{8} << 20,
                      (size_t{9} << 20) + 12345}) {
    const std::string path = DirectTestPath("direct_file_writer");
    const std::string text = TextPieces(size);
    auto file = DirectFileWriter::Create(path);
    ASSERT_TRUE(file.ok()) << file.status();
    for (size_t at = 0; at < text.size(); at += 70001) {
      (*file)->Append(absl::string_view(text).substr(at, 70001));
    }
    ASSERT_TRUE((*file)->Finish().ok());
    EXPECT_EQ(DirectReadBack(path), text) << size << " bytes";
  }
}

TEST(DirectFileWriterTest, AReserveLargerThanTheTextLeavesTheTextsSize) {
  const std::string path = DirectTestPath("direct_file_writer_reserved");
  const std::string text = TextPieces((size_t{5} << 20) + 7);
  auto file = DirectFileWriter::Create(path);
  ASSERT_TRUE(file.ok());
  (*file)->Reserve(64 << 20);
  (*file)->Append(text);
  ASSERT_TRUE((*file)->Finish().ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), text.size());
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, uint64_t{16} << 20);  // blocks given back
  EXPECT_EQ(DirectReadBack(path), text);
}

TEST(DirectFileWriterTest, ReplacesAnOlderLongerFile) {
  const std::string path = DirectTestPath("direct_file_writer_replace");
  ASSERT_TRUE(WriteFileDirect(path, TextPieces(kDirectFileMinBytes + 100000)).ok());
  ASSERT_TRUE(WriteFileDirect(path, "short\n").ok());
  EXPECT_EQ(DirectReadBack(path), "short\n");
}

TEST(DirectFileWriterTest, AMissingFolderNamesThePath) {
  auto file = DirectFileWriter::Create("/nonexistent/dir/out");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("/nonexistent/dir/out"), std::string::npos);
}

TEST(DirectFileWriterTest, AFullDeviceIsAnError) {
  auto file = DirectFileWriter::Create("/dev/full");
  if (!file.ok()) GTEST_SKIP() << file.status();
  (*file)->Append(TextPieces(size_t{9} << 20));
  EXPECT_FALSE((*file)->Finish().ok());
}

}  // namespace
}  // namespace profcpu::base
