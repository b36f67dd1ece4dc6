#include "archive/parallel_gzip.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "archive/archive.h"

namespace profcpu::archive {
namespace {

std::string TempPath(const char* name) { return absl::StrCat(::testing::TempDir(), "/", name); }

// Text that compresses like a perf script, with some noise.
std::string SomeText(size_t bytes) {
  std::mt19937 random(7);
  std::string text;
  while (text.size() < bytes) {
    absl::StrAppend(&text, "\t    7f12", random() % 100000, " func_", random() % 50,
                    "+0x1f (/usr/lib/libx.so)\n");
  }
  text.resize(bytes);
  return text;
}

std::string Gunzip(const std::string& path) {
  const std::string out = path + ".out";
  EXPECT_EQ(std::system(absl::StrCat("gzip -dc '", path, "' > '", out, "'").c_str()), 0);
  auto text = base::ReadFileBounded(out, 64 << 20);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

std::string Compress(const std::string& data, size_t piece_bytes, size_t write_bytes,
                     const char* name) {
  const std::string path = TempPath(name);
  base::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  EXPECT_TRUE(fd.valid());
  ParallelGzipWriter writer(fd.get(), piece_bytes);
  for (size_t at = 0; at < data.size(); at += write_bytes) {
    EXPECT_TRUE(writer.Write(absl::string_view(data).substr(at, write_bytes)).ok());
  }
  EXPECT_TRUE(writer.Finish().ok());
  return path;
}

// Many pieces (members), written in odd sizes: gzip reads back every byte in order.
TEST(ParallelGzipTest, ManyPiecesReadBackWhole) {
  const std::string data = SomeText(3'000'000);
  const std::string path = Compress(data, 64 << 10, 10007, "many.gz");
  EXPECT_EQ(Gunzip(path), data);
  auto compressed = base::ReadFileBounded(path, 64 << 20);
  ASSERT_TRUE(compressed.ok());
  EXPECT_LT(compressed->size(), data.size() / 3);  // compressed, not stored
}

TEST(ParallelGzipTest, EmptyStreamIsAValidGzipFile) {
  const std::string path = Compress("", 1 << 20, 1, "empty.gz");
  EXPECT_EQ(Gunzip(path), "");
}

TEST(ParallelGzipTest, WriteErrorsAreReported) {
  base::UniqueFd fd(::open("/dev/full", O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  ParallelGzipWriter writer(fd.get(), 4096);
  absl::Status status = writer.Write(SomeText(100'000));
  if (status.ok()) status = writer.Finish();
  EXPECT_FALSE(status.ok());
}

// A tar.gz bigger than one piece: tar and profcpu's own reader unpack it.
TEST(ParallelGzipTest, ArchiveOfSeveralPiecesUnpacks) {
  const std::string dir = TempPath("pgz");
  ASSERT_EQ(std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "/in' '", dir,
                                     "/ours' '", dir, "/tar'").c_str()),
            0);
  const std::string big = SomeText(9'000'000);
  ASSERT_TRUE(base::WriteFile(dir + "/in/big.txt", big).ok());
  ASSERT_TRUE(base::WriteFile(dir + "/in/small.txt", "small\n").ok());
  const std::string archive = dir + "/a.tar.gz";
  ASSERT_TRUE(WriteTarGz(archive, {{"small.txt", dir + "/in/small.txt"},
                                   {"big.txt", dir + "/in/big.txt"}}).ok());
  auto names = ExtractTarGz(archive, dir + "/ours");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(names->size(), 2u);
  EXPECT_EQ(*base::ReadFileBounded(dir + "/ours/big.txt", 64 << 20), big);
  ASSERT_EQ(std::system(absl::StrCat("tar -xzf '", archive, "' -C '", dir, "/tar'").c_str()), 0);
  EXPECT_EQ(*base::ReadFileBounded(dir + "/tar/big.txt", 64 << 20), big);
  EXPECT_EQ(*base::ReadFileBounded(dir + "/tar/small.txt", 64), "small\n");
}

}  // namespace
}  // namespace profcpu::archive
