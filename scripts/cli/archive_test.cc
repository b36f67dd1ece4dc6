#include "scripts/cli/archive.h"

#include <sys/stat.h>

#include <cstdlib>

#include "base/file_io.h"
#include "base/shared_library.h"
#include "gtest/gtest.h"
#include "scripts/cli/libarchive_api.h"

namespace profcpu::cli {
namespace {

std::string FreshDir(const char* name) {
  std::string dir = std::string(::testing::TempDir()) + "/" + name;
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  return dir;
}

// Writes a tar.gz whose single entry has `name`, the way a hostile archive would
// (through the library profcpu loads, plus the one call it never makes).
void WriteRawArchive(const std::string& path, const char* name, int type) {
  const LibArchive* api = *LoadLibArchive();
  auto lib = base::SharedLibrary::Open("libarchive.so.13", "libarchive13");
  ASSERT_TRUE(lib.ok()) << lib.status();
  void (*set_symlink)(archive_entry*, const char*) = nullptr;
  ASSERT_TRUE(lib->Get("archive_entry_set_symlink", &set_symlink).ok());
  archive* a = api->write_new();
  api->write_add_filter_gzip(a);
  api->write_set_format_pax_restricted(a);
  api->write_open_filename(a, path.c_str());
  archive_entry* e = api->entry_new();
  api->entry_set_pathname(e, name);
  api->entry_set_filetype(e, static_cast<unsigned>(type));
  api->entry_set_perm(e, 0644);
  if (type == AE_IFLNK) set_symlink(e, "/etc/passwd");
  api->entry_set_size(e, type == AE_IFREG ? 3 : 0);
  api->write_header(a, e);
  if (type == AE_IFREG) api->write_data(a, "abc", 3);
  api->entry_free(e);
  api->write_close(a);
  api->free_archive(a);
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

}  // namespace
}  // namespace profcpu::cli
