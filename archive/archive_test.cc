#include "archive/archive.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "base/shared_library.h"
#include "gtest/gtest.h"
#include "archive/libarchive_api.h"

namespace profcpu::archive {
namespace {

std::string FreshDir(const char* name) {
  std::string dir = std::string(::testing::TempDir()) + "/" + name;
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  return dir;
}

struct RawEntry {
  std::string name;
  int type = AE_IFREG;
  std::string data = "abc";
};

// Writes a tar.gz of `entries` as given, the way a hostile archive would
// (through the library profcpu loads, plus the one call it never makes).
void WriteRawArchive(const std::string& path, const std::vector<RawEntry>& entries) {
  const LibArchive* api = *LoadLibArchive();
  auto lib = base::SharedLibrary::Open("libarchive.so.13", "libarchive13");
  ASSERT_TRUE(lib.ok()) << lib.status();
  void (*set_symlink)(archive_entry*, const char*) = nullptr;
  ASSERT_TRUE(lib->Get("archive_entry_set_symlink", &set_symlink).ok());
  ::archive* a = api->write_new();
  api->write_add_filter_gzip(a);
  api->write_set_format_pax_restricted(a);
  api->write_open_filename(a, path.c_str());
  for (const RawEntry& entry : entries) {
    archive_entry* e = api->entry_new();
    api->entry_set_pathname(e, entry.name.c_str());
    api->entry_set_filetype(e, static_cast<unsigned>(entry.type));
    api->entry_set_perm(e, 0644);
    if (entry.type == AE_IFLNK) set_symlink(e, "/etc/passwd");
    const bool regular = entry.type == AE_IFREG;
    api->entry_set_size(e, regular ? static_cast<int64_t>(entry.data.size()) : 0);
    api->write_header(a, e);
    if (regular) api->write_data(a, entry.data.data(), entry.data.size());
    api->entry_free(e);
  }
  api->write_close(a);
  api->free_archive(a);
}

void WriteRawArchive(const std::string& path, const char* name, int type) {
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
    WriteRawArchive(tgz, name, AE_IFREG);
    std::string dst = FreshDir("archive_hostile_dst");
    auto result = ExtractTarGz(tgz, dst);
    EXPECT_FALSE(result.ok()) << name;
  }
  std::string tgz = dir + "/link.tar.gz";
  WriteRawArchive(tgz, "recording.zst", AE_IFLNK);
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
                        {"perf_script.out", AE_IFREG, Incompressible(4 << 20)},
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
      {{"recording.zst"}, {"perf_script.out", AE_IFLNK}},
      {{"perf_script.out", AE_IFLNK}, {"recording.zst"}},
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

}  // namespace
}  // namespace profcpu::archive
