#include "fold/output_buffer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/output_buffer_", ::getpid(), "_", name);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct stat StatOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st;
}

// Several blocks, so the writer thread hands on more than one.
std::string LargeText() {
  std::string text;
  for (int i = 0; text.size() < (size_t{5} << 20); ++i) absl::StrAppend(&text, "line ", i, "\n");
  return text;
}

TEST(OutputBufferTest, WritesEveryBlockInOrder) {
  const std::string path = TempPath("blocks");
  const std::string text = LargeText();
  ASSERT_TRUE(WriteFileThrough(path, [&](OutputBuffer* out) {
                for (size_t at = 0; at < text.size(); at += 4093) {
                  out->Append(absl::string_view(text).substr(at, 4093));
                }
                return out->Finish();
              }).ok());
  EXPECT_EQ(ReadAll(path), text);
  ::unlink(path.c_str());
}

TEST(OutputBufferTest, PreallocatedFileIsOnlyAsLongAsTheTextAtAnyTime) {
  const std::string path = TempPath("prealloc");
  const std::string text = LargeText();
  const uint64_t bound = uint64_t{64} << 20;
  ASSERT_TRUE(WriteFileThrough(path, [&](OutputBuffer* out) {
                out->Preallocate(bound);
                // A run killed now leaves an empty file, not 64 MiB of zeros.
                EXPECT_EQ(StatOf(path).st_size, 0);
                out->Append(text);
                return out->Finish();
              }).ok());
  const struct stat st = StatOf(path);
  EXPECT_EQ(static_cast<size_t>(st.st_size), text.size());
  // The reserved blocks past the text are given back.
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, bound / 2);
  EXPECT_EQ(ReadAll(path), text);
  ::unlink(path.c_str());
}

TEST(OutputBufferTest, PreallocateOnAPipeWritesAsUsual) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::FILE* writer = ::fdopen(fds[1], "w");
  ASSERT_NE(writer, nullptr);
  {
    OutputBuffer out(writer);
    out.Preallocate(1 << 20);
    out.Append("through a pipe\n");
    EXPECT_TRUE(out.Finish().ok());
  }
  std::fclose(writer);
  char read_back[64] = {};
  EXPECT_EQ(::read(fds[0], read_back, sizeof(read_back)), 15);
  EXPECT_STREQ(read_back, "through a pipe\n");
  ::close(fds[0]);
}

TEST(OutputBufferTest, KeepsTheFirstWriteError) {
  std::FILE* full = std::fopen("/dev/full", "we");
  ASSERT_NE(full, nullptr);
  absl::Status status;
  {
    OutputBuffer out(full);
    out.Append(LargeText());
    status = out.Finish();
  }
  std::fclose(full);
  EXPECT_NE(status.message().find("No space left"), std::string::npos) << status;
}

}  // namespace
}  // namespace profcpu::fold
