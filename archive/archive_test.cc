#include "archive/archive.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "gtest/gtest.h"
#include "archive/deflate.h"
#include "archive/tar_header.h"
#include "archive/tar_testing.h"

namespace profcpu::archive {
namespace {

std::string FreshDir(const char* name) {
  std::string dir = std::string(::testing::TempDir()) + "/" + name;
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  return dir;
}

using testing::RawEntry;

void WriteRawArchive(const std::string& path, const std::vector<RawEntry>& entries) {
  testing::WriteRawTarGz(path, entries);
}

void WriteRawArchive(const std::string& path, const char* name, char type) {
  WriteRawArchive(path, {{name, type}});
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// Bytes gzip cannot shrink, so an archive holding them is as large.
std::string Incompressible(size_t size) {
  std::string bytes(size, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : bytes) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  return bytes;
}

// What postprocess passes: the outputs it rebuilds, recording.zst as the marker.
ExtractSkip OutputsSkipped() {
  ExtractSkip skip;
  skip.names = {"flamegraph.svg", "perf_script.out", "profile.html"};
  skip.inputs_marker = "recording.zst";
  return skip;
}

TEST(ArchiveTest, RoundTripsFilesAndSubdirectories) {
  std::string src = FreshDir("archive_src");
  ASSERT_TRUE(base::WriteFile(src + "/a.txt", "alpha").ok());
  ASSERT_TRUE(base::WriteFile(src + "/b.map", std::string(1 << 20, 'b')).ok());
  std::string tgz = src + "/out.tar.gz";
  ASSERT_TRUE(WriteTarGz(tgz, {{"a.txt", src + "/a.txt"}, {"jit/b.map", src + "/b.map"}}).ok());
  struct stat st;
  EXPECT_NE(::stat((tgz + ".partial").c_str(), &st), 0);  // no leftover temp file

  std::string dst = FreshDir("archive_dst");
  auto names = ExtractTarGz(tgz, dst);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(names->size(), 2u);
  EXPECT_EQ(*base::ReadFileBounded(dst + "/a.txt", 100), "alpha");
  EXPECT_EQ(base::ReadFileBounded(dst + "/jit/b.map", 2 << 20)->size(), 1u << 20);
}

TEST(ArchiveTest, ExistingFilesAreKept) {
  std::string src = FreshDir("archive_keep_src");
  ASSERT_TRUE(base::WriteFile(src + "/a.txt", "from archive").ok());
  std::string tgz = src + "/out.tar.gz";
  ASSERT_TRUE(WriteTarGz(tgz, {{"a.txt", src + "/a.txt"}}).ok());
  std::string dst = FreshDir("archive_keep_dst");
  ASSERT_TRUE(base::WriteFile(dst + "/a.txt", "mine").ok());
  ASSERT_TRUE(ExtractTarGz(tgz, dst).ok());
  EXPECT_EQ(*base::ReadFileBounded(dst + "/a.txt", 100), "mine");
}

TEST(ArchiveTest, RefusesEscapingAndSpecialEntries) {
  std::string dir = FreshDir("archive_hostile");
  const char* bad_names[] = {"../escape.txt", "/etc/evil", "a/../../x"};
  for (const char* name : bad_names) {
    std::string tgz = dir + "/bad.tar.gz";
    WriteRawArchive(tgz, name, kTypeFile);
    std::string dst = FreshDir("archive_hostile_dst");
    auto result = ExtractTarGz(tgz, dst);
    EXPECT_FALSE(result.ok()) << name;
  }
  std::string tgz = dir + "/link.tar.gz";
  WriteRawArchive(tgz, "recording.zst", kTypeSymlink);
  std::string dst = FreshDir("archive_hostile_dst");
  EXPECT_FALSE(ExtractTarGz(tgz, dst).ok());
  struct stat st;
  EXPECT_NE(::lstat((dst + "/recording.zst").c_str(), &st), 0);
}

TEST(ArchiveTest, NotAnArchiveIsAnError) {
  std::string dir = FreshDir("archive_garbage");
  ASSERT_TRUE(base::WriteFile(dir + "/x.tar.gz", "this is not gzip").ok());
  EXPECT_FALSE(ExtractTarGz(dir + "/x.tar.gz", dir).ok());
}

TEST(ArchiveTest, SkippedEntriesAreNotWritten) {
  std::string dir = FreshDir("archive_skip");
  WriteRawArchive(dir + "/a.tar.gz", {{"recording.zst"}, {"jit/x.map"}, {"flamegraph.svg"}});
  std::string dst = FreshDir("archive_skip_dst");
  auto names = ExtractTarGz(dir + "/a.tar.gz", dst, {}, OutputsSkipped());
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"recording.zst", "jit/x.map"}));
  EXPECT_FALSE(Exists(dst + "/flamegraph.svg"));
}

// Outputs last (after recording.zst): the first skipped one ends the reading,
// so what follows is neither written nor even inflated. The archive is cut
// short inside perf_script.out to show that the stream is not read there.
TEST(ArchiveTest, StopsAtTheFirstSkippedEntryAfterTheMarker) {
  std::string dir = FreshDir("archive_stop");
  const std::string tgz = dir + "/a.tar.gz";
  WriteRawArchive(tgz, {{"recording.zst"},
                        {"jit/x.map"},
                        {"perf_script.out", kTypeFile, Incompressible(4 << 20)},
                        {"late.txt"}});
  ASSERT_EQ(::truncate(tgz.c_str(), 1 << 20), 0);

  std::string whole = FreshDir("archive_stop_whole");
  EXPECT_FALSE(ExtractTarGz(tgz, whole).ok());  // without skipping, the cut is reached

  std::string dst = FreshDir("archive_stop_dst");
  auto names = ExtractTarGz(tgz, dst, {}, OutputsSkipped());
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"recording.zst", "jit/x.map"}));
  EXPECT_FALSE(Exists(dst + "/perf_script.out"));
  EXPECT_FALSE(Exists(dst + "/late.txt"));
}

// Archives from before the inputs-first order hold their outputs before
// recording.zst and profile.html after it, followed by the JIT copies: they are
// read whole, skipping only the named entries.
TEST(ArchiveTest, AnOlderOrderIsReadWhole) {
  std::string dir = FreshDir("archive_old_order");
  WriteRawArchive(dir + "/a.tar.gz", {{"flamegraph.svg"},
                                      {"perf_script.out"},
                                      {"recording.zst"},
                                      {"symbols.bin"},
                                      {"profile.html"},
                                      {"jit/x.map"},
                                      {"profile.pb.gz"}});
  std::string dst = FreshDir("archive_old_order_dst");
  auto names = ExtractTarGz(dir + "/a.tar.gz", dst, {}, OutputsSkipped());
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"recording.zst", "symbols.bin", "jit/x.map",
                                              "profile.pb.gz"}));
  EXPECT_FALSE(Exists(dst + "/profile.html"));
}

// A skipped name is no pass: the entry is checked before it is skipped.
TEST(ArchiveTest, SkippingStillRefusesHostileEntries) {
  std::string dir = FreshDir("archive_skip_hostile");
  const std::vector<std::vector<RawEntry>> archives = {
      {{"recording.zst"}, {"perf_script.out", kTypeSymlink}},
      {{"perf_script.out", kTypeSymlink}, {"recording.zst"}},
      {{"recording.zst"}, {"../perf_script.out"}},
      {{"recording.zst"}, {"/tmp/profile.html"}, {"perf_script.out"}},
  };
  for (size_t i = 0; i < archives.size(); ++i) {
    WriteRawArchive(dir + "/bad.tar.gz", archives[i]);
    std::string dst = FreshDir("archive_skip_hostile_dst");
    EXPECT_FALSE(ExtractTarGz(dir + "/bad.tar.gz", dst, {}, OutputsSkipped()).ok()) << i;
    EXPECT_FALSE(Exists(dst + "/perf_script.out")) << i;
  }
}

// Beyond symlinks and escaping names: every entry that is not a plain file
// or folder is refused, however its name reaches the reader (pax path, GNU
// long name), and the error names the archive and the entry.
TEST(ArchiveTest, RefusesLinksDevicesAndEscapesByAnyRoute) {
  std::string dir = FreshDir("archive_hostile_kinds");
  const std::string gnu_long_name =
      EncodeHeaderBlock("././@LongLink", "", kTypeGnuLongName, 12, 0) +
      testing::Padded(std::string("../escaped\0", 11) + "x") +
      EncodeHeaderBlock("harmless", "", kTypeFile, 0, 0) + std::string(1024, '\0');
  struct Case {
    const char* what;
    std::vector<RawEntry> entries;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"hard link", {{"recording.zst", kTypeHardLink, ""}}, "refusing hard link 'recording.zst'"},
      {"device", {{"dev", kTypeCharDevice, ""}}, "refusing device 'dev'"},
      {"block device", {{"disk", kTypeBlockDevice, ""}}, "refusing device 'disk'"},
      {"fifo", {{"pipe", kTypeFifo, ""}}, "refusing FIFO 'pipe'"},
      {"sparse", {{"s", 'S', ""}}, "refusing GNU sparse file 's'"},
      {"pax escape", {{"ok", kTypeFile, "x", PaxRecord("path", "../../etc/cron.d/x")}},
       "refusing file '../../etc/cron.d/x'"},
      {"pax absolute", {{"ok", kTypeFile, "x", PaxRecord("path", "/tmp/x")}},
       "refusing file '/tmp/x'"},
      {"folder escape", {{"../up/", kTypeDirectory, ""}}, "refusing directory '../up/'"},
      {"only dots", {{"./.", kTypeFile}}, "refusing file './.'"},
  };
  for (const Case& c : cases) {
    const std::string tgz = dir + "/bad.tar.gz";
    WriteRawArchive(tgz, c.entries);
    std::string dst = FreshDir("archive_hostile_kinds_dst");
    auto result = ExtractTarGz(tgz, dst);
    ASSERT_FALSE(result.ok()) << c.what;
    EXPECT_NE(result.status().message().find(tgz + ": " + c.message), std::string::npos)
        << c.what << ": " << result.status();
    EXPECT_EQ(std::system(("test -z \"$(ls -A '" + dst + "')\"").c_str()), 0) << c.what;
  }
  const std::string tgz = dir + "/long.tar.gz";
  ASSERT_TRUE(base::WriteFile(tgz, *Deflate(gnu_long_name, DeflateContainer::kGzip)).ok());
  std::string dst = FreshDir("archive_hostile_kinds_dst");
  auto result = ExtractTarGz(tgz, dst);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("refusing file '../escaped'"), std::string::npos)
      << result.status();
  EXPECT_FALSE(Exists(dir + "/escaped"));
}

// An entry cut short is an error, and leaves no truncated file behind
// (postprocess would read a truncated recording.zst as a whole one).
TEST(ArchiveTest, TruncatedEntryLeavesNoFile) {
  std::string dir = FreshDir("archive_truncated");
  const std::string tar =
      testing::RawTar({{"metadata.json", kTypeFile, "{}"},
                       {"recording.zst", kTypeFile, Incompressible(100000)}});
  const std::string tgz = dir + "/cut.tar.gz";
  ASSERT_TRUE(
      base::WriteFile(tgz, *Deflate(tar.substr(0, 3 * kTarBlock + 50000), DeflateContainer::kGzip))
          .ok());
  std::string dst = FreshDir("archive_truncated_dst");
  auto result = ExtractTarGz(tgz, dst);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("ends inside entry 'recording.zst'"), std::string::npos)
      << result.status();
  EXPECT_TRUE(Exists(dst + "/metadata.json"));
  EXPECT_FALSE(Exists(dst + "/recording.zst"));
}

// "./a", "a//b" and folders: the names as written, folders made as needed.
TEST(ArchiveTest, NamesAreNormalizedAndFoldersSkipped) {
  std::string dir = FreshDir("archive_names");
  WriteRawArchive(dir + "/a.tar.gz", {{"./", kTypeDirectory, ""},
                                      {"./recording.zst"},
                                      {"./jit/", kTypeDirectory, ""},
                                      {"jit//x.map"}});
  std::string dst = FreshDir("archive_names_dst");
  auto names = ExtractTarGz(dir + "/a.tar.gz", dst);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"recording.zst", "jit/x.map"}));
  EXPECT_EQ(*base::ReadFileBounded(dst + "/jit/x.map", 100), "abc");
}

TEST(ArchiveTest, ErrorsNameTheArchive) {
  std::string dir = FreshDir("archive_errors");
  const std::string text = dir + "/x.tar.gz";
  ASSERT_TRUE(base::WriteFile(text, std::string(2000, 'x')).ok());
  auto result = ExtractTarGz(text, dir);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find(text + " is not a tar archive"), std::string::npos)
      << result.status();
  const std::string bad_gzip = dir + "/bad.tar.gz";
  std::string bytes = *Deflate(testing::RawTar({{"a"}}), DeflateContainer::kGzip);
  bytes[bytes.size() / 2] ^= 0x55;
  ASSERT_TRUE(base::WriteFile(bad_gzip, bytes).ok());
  result = ExtractTarGz(bad_gzip, FreshDir("archive_errors_dst"));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find(bad_gzip + ": "), std::string::npos) << result.status();
}

TEST(ArchiveTest, LimitsAreKept) {
  std::string dir = FreshDir("archive_limits");
  WriteRawArchive(dir + "/a.tar.gz", {{"a", kTypeFile, "12345"}, {"b", kTypeFile, "12345"}});
  ExtractLimits entry_limit;
  entry_limit.max_entry_bytes = 4;
  EXPECT_EQ(ExtractTarGz(dir + "/a.tar.gz", FreshDir("archive_limits_1"), entry_limit)
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
  ExtractLimits total_limit;
  total_limit.max_total_bytes = 8;
  EXPECT_EQ(ExtractTarGz(dir + "/a.tar.gz", FreshDir("archive_limits_2"), total_limit)
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
  ExtractLimits count_limit;
  count_limit.max_entries = 1;
  EXPECT_EQ(ExtractTarGz(dir + "/a.tar.gz", FreshDir("archive_limits_3"), count_limit)
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace profcpu::archive
