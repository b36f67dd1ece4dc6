#include "fold/line_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "base/file_io.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

std::vector<std::string> ReadAll(LineReader& reader) {
  std::vector<std::string> lines;
  absl::string_view line;
  while (reader.Next(&line)) lines.emplace_back(line);
  EXPECT_TRUE(reader.status().ok()) << reader.status();
  return lines;
}

TEST(LineReaderTest, SplitsOnNewlinesOnly) {
  LineReader reader = LineReader::FromString("a\n\nb\r\n\tc\nlast", 100);
  EXPECT_EQ(ReadAll(reader), (std::vector<std::string>{"a", "", "b\r", "\tc", "last"}));
}

TEST(LineReaderTest, KeepsNulAndInvalidUtf8) {
  std::string text("x\0y\n\xff\xfe\n", 6);
  LineReader reader = LineReader::FromString(text);
  EXPECT_EQ(ReadAll(reader), (std::vector<std::string>{std::string("x\0y", 3), "\xff\xfe"}));
}

TEST(LineReaderTest, LastLineWithoutNewline) {
  LineReader reader = LineReader::FromString("a\nb");
  EXPECT_EQ(ReadAll(reader), (std::vector<std::string>{"a", "b"}));
  LineReader empty = LineReader::FromString("");
  EXPECT_TRUE(ReadAll(empty).empty());
}

TEST(LineReaderTest, SkipsOverlongLines) {
  LineReader reader = LineReader::FromString("short\n0123456789\nok\n0123456789", 5);
  EXPECT_EQ(ReadAll(reader), (std::vector<std::string>{"short", "ok"}));
  EXPECT_EQ(reader.overlong_lines(), 2u);
}

// A file larger than the reader's buffer, with lines straddling every read,
// an overlong line spanning reads, and no final newline.
TEST(LineReaderTest, FileAcrossManyReads) {
  std::mt19937 random(42);
  std::string text;
  std::vector<std::string> want;
  const size_t kMaxLine = 4096;
  while (text.size() < (size_t{5} << 20)) {
    size_t length = random() % 200;
    if (random() % 1000 == 0) length = kMaxLine + random() % (3 << 20);  // overlong
    std::string line(length, 'a' + static_cast<char>(random() % 26));
    if (length <= kMaxLine) want.push_back(line);
    text += line;
    text += '\n';
  }
  text += "tail";
  want.push_back("tail");

  char path[] = "/tmp/line_reader_test_XXXXXX";
  ASSERT_TRUE(base::UniqueFd(mkstemp(path)).valid());  // made, then closed
  ASSERT_TRUE(base::WriteFile(path, text).ok());
  absl::StatusOr<LineReader> reader = LineReader::Open(path, kMaxLine);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<std::string> got = ReadAll(*reader);
  unlink(path);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
  EXPECT_EQ(reader->bytes_read(), text.size());

  LineReader from_string = LineReader::FromString(text, kMaxLine);
  EXPECT_TRUE(ReadAll(from_string) == want);
  EXPECT_EQ(from_string.overlong_lines(), reader->overlong_lines());
}

TEST(LineReaderTest, ReadsAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  base::UniqueFd read_end(fds[0]);
  base::UniqueFd write_end(fds[1]);
  ASSERT_EQ(write(write_end.get(), "one\ntwo\n", 8), 8);
  write_end.Reset();  // the reader sees the end
  LineReader reader = LineReader::FromFd(std::move(read_end));
  EXPECT_EQ(ReadAll(reader), (std::vector<std::string>{"one", "two"}));
}

TEST(LineReaderTest, OpenFailsWithContext) {
  absl::StatusOr<LineReader> reader = LineReader::Open("/nonexistent/perf_script.out");
  EXPECT_FALSE(reader.ok());
}

}  // namespace
}  // namespace profcpu::fold
