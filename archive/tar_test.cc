// tar_writer.h and tar_reader.h against each other and against hand-built
// headers: names in every field they can take, sizes past ustar's octal
// field, and the malformed streams a hostile archive holds.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "archive/archive_input.h"
#include "archive/tar_header.h"
#include "archive/tar_reader.h"
#include "archive/tar_testing.h"
#include "archive/tar_writer.h"
#include "gtest/gtest.h"

namespace profcpu::archive {
namespace {

struct ReadEntry {
  std::string name;
  TarEntry::Kind kind;
  std::string data;
};

// Every entry of `tar` with its data, or the first error.
absl::StatusOr<std::vector<ReadEntry>> ReadAll(absl::string_view tar) {
  StringSource source(tar);
  TarReader reader(&source, "test.tar");
  std::vector<ReadEntry> entries;
  while (true) {
    absl::StatusOr<std::optional<TarEntry>> entry = reader.Next();
    if (!entry.ok()) return entry.status();
    if (!entry->has_value()) return entries;
    ReadEntry read{(*entry)->name, (*entry)->kind, ""};
    char buffer[1000];
    while (true) {
      absl::StatusOr<size_t> n = reader.ReadData(buffer, sizeof(buffer));
      if (!n.ok()) return n.status();
      if (*n == 0) break;
      read.data.append(buffer, *n);
    }
    entries.push_back(read);
  }
}

std::string Write(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string tar;
  TarWriter writer([&tar](absl::string_view bytes) {
    tar.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  });
  for (const auto& [name, data] : files) {
    EXPECT_TRUE(writer.BeginFile(name, data.size(), 1700000000).ok());
    EXPECT_TRUE(writer.WriteData(data).ok());
  }
  EXPECT_TRUE(writer.Finish().ok());
  return tar;
}

TEST(TarTest, RoundTripsNamesOfEveryLength) {
  const std::string dir155(150, 'd');
  const std::vector<std::pair<std::string, std::string>> files = {
      {"recording.zst", "recording"},
      {"empty", ""},
      {std::string(100, 'n'), "exactly the name field"},
      {dir155 + "/" + std::string(90, 'f'), "split into prefix and name"},
      {std::string(300, 'x'), "a pax path: no '/' to split at"},
      {"jit/" + std::string(2000, 'y') + ".map", std::string(5000, 'z')},
      {"caf\xc3\xa9/\xe2\x82\xac.txt", "bytes of the name kept as they are"},
  };
  const std::string tar = Write(files);
  EXPECT_EQ(tar.size() % kTarBlock, 0u);
  auto entries = ReadAll(tar);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ((*entries)[i].name, files[i].first);
    EXPECT_EQ((*entries)[i].data, files[i].second);
    EXPECT_EQ((*entries)[i].kind, TarEntry::Kind::kFile);
  }
}

TEST(TarTest, ShortNamesNeedNoPaxHeader) {
  // One header block, the data padded to a block, two zero blocks: the
  // ustar header libarchive's "pax restricted" format wrote too.
  EXPECT_EQ(Write({{"metadata.json", "{}"}}).size(), 4 * kTarBlock);
}

// 9 GiB does not fit 11 octal digits: the size goes into a pax record, and
// the reader takes it from there (the data itself is not written here).
TEST(TarTest, SizesPastEightGibGoIntoAPaxRecord) {
  const uint64_t size = 9ull << 30;
  const std::string headers = FileHeaderBlocks("perf_script.out", size, 0);
  EXPECT_NE(headers.find(PaxRecord("size", "9663676416")), std::string::npos);
  StringSource source(headers);
  TarReader reader(&source, "big.tar");
  auto entry = reader.Next();
  ASSERT_TRUE(entry.ok()) << entry.status();
  ASSERT_TRUE(entry->has_value());
  EXPECT_EQ((*entry)->name, "perf_script.out");
  EXPECT_EQ((*entry)->size, size);
  char buffer[16];
  auto n = reader.ReadData(buffer, sizeof(buffer));
  EXPECT_FALSE(n.ok());  // the stream ends where the data would begin
  EXPECT_NE(n.status().message().find("'perf_script.out' (truncated)"), std::string::npos)
      << n.status();
}

// GNU tar's base-256 size field (first byte 0x80), used for files of 8 GiB
// and more in its default format.
TEST(TarTest, ReadsBase256Sizes) {
  std::string block = EncodeHeaderBlock("big.bin", "", kTypeFile, 0, 0);
  std::string field(12, '\0');
  field[0] = '\x80';
  const uint64_t size = 10ull << 30;
  for (int i = 0; i < 8; ++i) field[11 - i] = static_cast<char>(size >> (8 * i));
  block.replace(124, 12, field);
  // Recompute the checksum over the new field.
  unsigned sum = 0;
  for (size_t i = 0; i < kTarBlock; ++i) {
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(block[i]);
  }
  char digits[8];
  std::snprintf(digits, sizeof(digits), "%06o", sum);
  block.replace(148, 6, digits, 6);
  auto header = DecodeHeaderBlock(block);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->size, size);
}

TEST(TarTest, PaxRecordLengthCountsItsOwnDigits) {
  EXPECT_EQ(PaxRecord("path", "a"), "9 path=a\n");
  // 99 bytes without the length; 2 digits would make 101, which has 3: 102.
  const std::string record = PaxRecord("path", std::string(92, 'a'));
  EXPECT_EQ(record.substr(0, 4), "102 ");
  EXPECT_EQ(record.size(), 102u);
  auto parsed = ParsePaxRecords(record + PaxRecord("size", "12"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].second, std::string(92, 'a'));
  EXPECT_EQ((*parsed)[1], (std::pair<std::string, std::string>("size", "12")));
}

TEST(TarTest, ReportsLinksDevicesAndFoldersForTheCallerToJudge) {
  using testing::RawEntry;
  auto entries = ReadAll(testing::RawTar({{"d/", kTypeDirectory, ""},
                                          {"link", kTypeSymlink, ""},
                                          {"hard", kTypeHardLink, ""},
                                          {"dev", kTypeCharDevice, ""},
                                          {"fifo", kTypeFifo, ""},
                                          {"old/", kTypeOldFile, ""}}));
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 6u);
  EXPECT_EQ((*entries)[0].kind, TarEntry::Kind::kDirectory);
  EXPECT_EQ((*entries)[1].kind, TarEntry::Kind::kSymlink);
  EXPECT_EQ((*entries)[2].kind, TarEntry::Kind::kHardLink);
  EXPECT_EQ((*entries)[3].kind, TarEntry::Kind::kDevice);
  EXPECT_EQ((*entries)[4].kind, TarEntry::Kind::kFifo);
  EXPECT_EQ((*entries)[5].kind, TarEntry::Kind::kDirectory);  // v7: a trailing '/'
}

TEST(TarTest, PaxPathAndSparseRecords) {
  auto entries = ReadAll(testing::RawTar(
      {{"short", kTypeFile, "data", PaxRecord("path", "a/much/longer/name")},
       {"sparse", kTypeFile, "", PaxRecord("GNU.sparse.major", "1")}}));
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_EQ((*entries)[0].name, "a/much/longer/name");
  EXPECT_EQ((*entries)[0].data, "data");
  EXPECT_EQ((*entries)[1].kind, TarEntry::Kind::kOther);
}

// Each malformed stream is an error that names the archive, never a crash.
TEST(TarTest, MalformedStreamsAreErrors) {
  const std::string good = Write({{"a.txt", "alpha"}, {"b.txt", "beta"}});
  std::string bad_checksum = good;
  bad_checksum[kTarBlock * 2 + 10] ^= 1;  // inside b.txt's header
  std::string long_pax = testing::RawTar({{"x", kTypeFile, "", "99999999 path=x\n"}});
  std::string huge_pax = EncodeHeaderBlock("p", "", kTypePaxHeader, 2u << 20, 0);
  std::string bad_record = testing::RawTar({{"x", kTypeFile, "", "5 pa\n"}});
  std::string pax_then_end = EncodeHeaderBlock("p", "", kTypePaxHeader, 9, 0) +
                             testing::Padded("9 path=a\n") + std::string(1024, '\0');
  std::string many_pax;
  for (int i = 0; i < 20; ++i) {
    many_pax += EncodeHeaderBlock("p", "", kTypePaxHeader, 9, 0) + testing::Padded("9 path=a\n");
  }
  many_pax += testing::RawTar({{"x"}});
  std::string long_name = testing::RawTar(
      {{"x", kTypeFile, "", PaxRecord("path", std::string(5000, 'a'))}});
  std::string nul_name = testing::RawTar({{"x", kTypeFile, "", PaxRecord("path", std::string("a\0b", 3))}});
  std::string bad_pax_size = testing::RawTar({{"x", kTypeFile, "", PaxRecord("size", "-1")}});
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"empty", ""},
      {"not tar", "this is not a tar archive"},
      {"one block of text", std::string(kTarBlock, 'x')},
      {"cut inside a header", good.substr(0, kTarBlock + 100)},
      {"cut inside data", good.substr(0, kTarBlock + 3)},
      {"cut after a header", good.substr(0, kTarBlock)},
      {"checksum", bad_checksum},
      {"pax length past its data", long_pax},
      {"pax header over 1 MiB", huge_pax},
      {"pax record malformed", bad_record},
      {"pax header then the end", pax_then_end},
      {"pax headers without end", many_pax},
      {"name over 4096 bytes", long_name},
      {"NUL in a pax path", nul_name},
      {"negative pax size", bad_pax_size},
  };
  for (const auto& [what, tar] : cases) {
    auto entries = ReadAll(tar);
    EXPECT_FALSE(entries.ok()) << what;
    EXPECT_TRUE(absl::StartsWith(entries.status().message(), "test.tar"))
        << what << ": " << entries.status();
  }
}

TEST(TarTest, EndsAtAZeroBlockOrAtTheEndOfTheStream) {
  const std::string good = Write({{"a.txt", "alpha"}});
  // Without its end blocks (some writers stop there), with one, with two and
  // garbage after them (tape padding is never read).
  for (const std::string& tar : {good.substr(0, 2 * kTarBlock), good.substr(0, 3 * kTarBlock),
                                 good + "trailing garbage"}) {
    auto entries = ReadAll(tar);
    ASSERT_TRUE(entries.ok()) << entries.status();
    ASSERT_EQ(entries->size(), 1u);
    EXPECT_EQ((*entries)[0].data, "alpha");
  }
}

TEST(TarTest, WriterRefusesShortDataAndBadNames) {
  std::string tar;
  TarWriter writer([&tar](absl::string_view bytes) {
    tar.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  });
  EXPECT_FALSE(writer.BeginFile("", 1, 0).ok());
  EXPECT_FALSE(writer.BeginFile(std::string("a\0b", 3), 1, 0).ok());
  ASSERT_TRUE(writer.BeginFile("a", 5, 0).ok());
  EXPECT_FALSE(writer.WriteData("too long").ok());
  ASSERT_TRUE(writer.WriteData("abc").ok());
  EXPECT_FALSE(writer.Finish().ok());  // 2 bytes short
}

}  // namespace
}  // namespace profcpu::archive
