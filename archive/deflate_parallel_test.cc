#include "archive/deflate_parallel.h"

#include <zlib.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "archive/deflate.h"
#include "gtest/gtest.h"

namespace profcpu::archive {
namespace {

// zlib's inflate of a whole zlib stream (its Adler-32 checked); fails the
// test on anything else, trailing bytes included.
std::string Inflate(const std::vector<std::string>& parts) {
  std::string stream;
  for (const std::string& part : parts) stream += part;
  z_stream z = {};
  EXPECT_EQ(inflateInit(&z), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(stream.data()));
  z.avail_in = static_cast<uInt>(stream.size());
  std::string out;
  char buffer[1 << 14];
  int result = Z_OK;
  while (result == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    result = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - z.avail_out);
  }
  EXPECT_EQ(result, Z_STREAM_END) << (z.msg ? z.msg : "");
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the stream's end";
  inflateEnd(&z);
  return out;
}

// Varints and names, as a page's data holds them.
std::string PageLike(size_t bytes) {
  std::mt19937 random(11);
  std::string data;
  while (data.size() < bytes) {
    if (random() % 8 == 0) absl::StrAppend(&data, "frame_", random() % 300, "::run");
    data.push_back(static_cast<char>(random() % 4 == 0 ? random() : random() % 7));
  }
  data.resize(bytes);
  return data;
}

std::string Noise(size_t bytes) {
  std::mt19937 random(5);
  std::string data(bytes, '\0');
  for (char& c : data) c = static_cast<char>(random());
  return data;
}

TEST(DeflateZlibInPiecesTest, InflatesToTheDataWhateverThePiecesAndThreads) {
  // Noise makes libdeflate store blocks (a final block that ends on a byte);
  // the rest ends its final block anywhere in a byte.
  for (const std::string& data :
       {std::string(), std::string("a"), PageLike(100000), Noise(70000),
        PageLike(50000) + Noise(30000) + std::string(40000, 'x')}) {
    for (size_t piece : {size_t{1}, size_t{3}, size_t{4096}, size_t{33333}, kDeflatePieceBytes}) {
      if (piece == 1 && data.size() > 5000) continue;  // a piece per byte: slow, nothing new
      for (size_t threads : {1, 3}) {
        DeflateWork work;
        absl::StatusOr<std::vector<std::string>> stream = DeflateZlibInPieces(data, threads, &work, piece);
        ASSERT_TRUE(stream.ok()) << stream.status();
        EXPECT_EQ(Inflate(*stream), data) << data.size() << " bytes in pieces of " << piece;
        EXPECT_EQ(work.tasks, std::max<size_t>(1, (data.size() + piece - 1) / piece));
        EXPECT_EQ(work.threads, std::min(threads, work.tasks));
        EXPECT_GE(work.task_cpu_s, work.longest_task_s);
        // Joined, not the one-stream fallback: a header, the pieces, a trailer.
        if (work.tasks > 1) {
          EXPECT_EQ(stream->size(), work.tasks + 2);
        }
      }
    }
  }
}

TEST(DeflateZlibInPiecesTest, SameBytesOnAnyNumberOfThreads) {
  const std::string data = PageLike(300000);
  absl::StatusOr<std::vector<std::string>> one = DeflateZlibInPieces(data, 1, nullptr, 40000);
  absl::StatusOr<std::vector<std::string>> four = DeflateZlibInPieces(data, 4, nullptr, 40000);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_EQ(*one, *four);
}

TEST(DeflateZlibInPiecesTest, NoLargerThanZlibsLevelSix) {
  const std::string data = PageLike(3000000);
  absl::StatusOr<std::vector<std::string>> pieces = DeflateZlibInPieces(data, 2);
  absl::StatusOr<std::string> zlib = Deflate(data, DeflateContainer::kZlib);
  ASSERT_TRUE(pieces.ok() && zlib.ok());
  size_t size = 0;
  for (const std::string& part : *pieces) size += part.size();
  EXPECT_EQ(Inflate(*pieces), data);
  EXPECT_LE(size, zlib->size());
}

// The page adds pieces as it encodes them: the stream must be the one the
// whole data gives, whatever the threads and however slowly pieces come.
TEST(ZlibPieceStreamTest, SameStreamAsTheWholeData) {
  const std::string data = PageLike(250000);
  const size_t piece = 20000;
  absl::StatusOr<std::vector<std::string>> whole = DeflateZlibInPieces(data, 1, nullptr, piece);
  ASSERT_TRUE(whole.ok());
  for (size_t threads : {1, 2, 5}) {
    ZlibPieceStream stream(threads, piece);
    size_t at = 0;
    for (; data.size() - at > piece; at += piece) stream.Add(data.substr(at, piece));
    EXPECT_EQ(stream.pieces(), 12u);
    DeflateWork work;
    absl::StatusOr<std::vector<std::string>> parts = stream.Finish(data.substr(at), &work);
    ASSERT_TRUE(parts.ok()) << parts.status();
    EXPECT_EQ(*parts, *whole) << threads << " threads";
    EXPECT_EQ(Inflate(*parts), data);
    EXPECT_EQ(work.tasks, 13u);
    EXPECT_EQ(work.threads, threads);
  }
}

}  // namespace
}  // namespace profcpu::archive
