// Archives from elsewhere, read by ExtractTarGz, and ours read elsewhere:
// users repack run folders with GNU tar (its default gnu format, pax, ustar)
// or Python's tarfile, and profcpu wrote prof.tar.gz through libarchive before
// it framed tar itself (testdata/written_by_libarchive.tar.gz). The foreign
// archives are written here, at test time, by the tar and python3 installed.
#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "archive/run_archive.h"
#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::archive {
namespace {

// A name past ustar's 100 bytes that its prefix can still hold, and one that
// only pax or GNU's long names can.
const std::string kSplittable = "dotnet/" + std::string(120, 'm') + ".nettrace";
const std::string kLongFolder = "jit/" + std::string(120, 'l');
const std::string kLong = kLongFolder + "/" + std::string(150, 'l') + ".map";

std::string InteropDir(const std::string& name) {
  std::string dir = absl::StrCat(::testing::TempDir(), "/", name);
  EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'").c_str()), 0);
  return dir;
}

int Shell(const std::string& command) { return std::system(command.c_str()); }

// A run folder's worth of files, `long_names` adds the two long ones.
std::string MakeFolder(const std::string& dir, bool long_names) {
  EXPECT_EQ(Shell(absl::StrCat("mkdir -p '", dir, "/", long_names ? kLongFolder : "jit", "' '",
                               dir, "/dotnet'")),
            0);
  EXPECT_TRUE(base::WriteFile(dir + "/recording.zst", "recording").ok());
  EXPECT_TRUE(base::WriteFile(dir + "/metadata.json", "{}\n").ok());
  EXPECT_TRUE(base::WriteFile(dir + "/perf_script.out", std::string(100000, 'p')).ok());
  if (long_names) {
    EXPECT_TRUE(base::WriteFile(dir + "/" + kSplittable, "splittable").ok());
    EXPECT_TRUE(base::WriteFile(dir + "/" + kLong, "long").ok());
  }
  return dir;
}

void ExpectFolderExtracted(const std::string& dst, bool long_names) {
  EXPECT_EQ(*base::ReadFileBounded(dst + "/recording.zst", 100), "recording");
  EXPECT_EQ(*base::ReadFileBounded(dst + "/metadata.json", 100), "{}\n");
  EXPECT_EQ(base::ReadFileBounded(dst + "/perf_script.out", 1 << 20)->size(), 100000u);
  if (long_names) {
    EXPECT_EQ(*base::ReadFileBounded(dst + "/" + kSplittable, 100), "splittable");
    EXPECT_EQ(*base::ReadFileBounded(dst + "/" + kLong, 100), "long");
  }
}

// GNU tar of the folder's contents ("./recording.zst", ...), in each format.
TEST(TarInteropTest, ReadsGnuTarArchives) {
  for (const char* format : {"gnu", "pax", "ustar"}) {
    SCOPED_TRACE(format);
    const bool long_names = std::string(format) != "ustar";  // ustar: 255 bytes at most
    const std::string src = MakeFolder(InteropDir(absl::StrCat("gnu_src_", format)), long_names);
    const std::string tgz = absl::StrCat(src, ".tar.gz");
    ASSERT_EQ(Shell(absl::StrCat("tar --format=", format, " -czf '", tgz, "' -C '", src, "' .")), 0);
    const std::string dst = InteropDir(absl::StrCat("gnu_dst_", format));
    auto names = ExtractTarGz(tgz, dst);
    ASSERT_TRUE(names.ok()) << names.status();
    ExpectFolderExtracted(dst, long_names);
    // Names come out without the "./": postprocess's skip list matches them.
    const std::string dst2 = InteropDir(absl::StrCat("gnu_skip_", format));
    auto kept = ExtractTarGz(tgz, dst2, {}, PostprocessSkip(true));
    ASSERT_TRUE(kept.ok()) << kept.status();
    struct stat st;
    EXPECT_NE(::stat((dst2 + "/perf_script.out").c_str(), &st), 0);
    EXPECT_EQ(::stat((dst2 + "/recording.zst").c_str(), &st), 0);
  }
}

// GNU tar writes plain .tar too; and a splittable name in ustar's prefix.
TEST(TarInteropTest, ReadsAnUncompressedTar) {
  const std::string src = MakeFolder(InteropDir("plain_src"), false);
  ASSERT_EQ(base::WriteFile(src + "/" + std::string(90, 'a'), "x").ok(), true);
  const std::string tar = src + ".tar";
  ASSERT_EQ(Shell(absl::StrCat("cd '", src, "' && tar --format=ustar -cf '", tar, "' *")), 0);
  const std::string dst = InteropDir("plain_dst");
  auto names = ExtractTarGz(tar, dst);
  ASSERT_TRUE(names.ok()) << names.status();
  ExpectFolderExtracted(dst, false);
}

TEST(TarInteropTest, ReadsPythonTarfileArchives) {
  for (const char* format : {"GNU_FORMAT", "PAX_FORMAT", "USTAR_FORMAT"}) {
    SCOPED_TRACE(format);
    const bool long_names = std::string(format) != "USTAR_FORMAT";
    const std::string src = MakeFolder(InteropDir(absl::StrCat("py_src_", format)), long_names);
    const std::string tgz = absl::StrCat(src, ".tar.gz");
    ASSERT_EQ(Shell(absl::StrCat("python3 -c 'import sys, tarfile\n"
                               "with tarfile.open(sys.argv[1], \"w:gz\", format=tarfile.",
                               format, ") as t: t.add(sys.argv[2], arcname=\".\")' '", tgz,
                               "' '", src, "'")),
              0);
    const std::string dst = InteropDir(absl::StrCat("py_dst_", format));
    auto names = ExtractTarGz(tgz, dst);
    ASSERT_TRUE(names.ok()) << names.status();
    ExpectFolderExtracted(dst, long_names);
  }
}

TEST(TarInteropTest, ReadsWhatProfcpuWroteThroughLibarchive) {
  const std::string dst = InteropDir("libarchive_dst");
  auto names = ExtractTarGz(PROFCPU_ARCHIVE_TESTDATA "/written_by_libarchive.tar.gz", dst);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"recording.zst", "metadata.json", "jit/perf-42.map",
                                              "dotnet/" + std::string(120, 'n') + ".nettrace",
                                              "flamegraph.svg", "perf_script.out"}));
  EXPECT_EQ(*base::ReadFileBounded(dst + "/jit/perf-42.map", 100), "7f0000001000 40 App::Run\n");
  EXPECT_EQ(base::ReadFileBounded(dst + "/perf_script.out", 1 << 20)->size(), 70000u);
}

// Ours, long names included, read by GNU tar and by Python's tarfile.
TEST(TarInteropTest, GnuTarAndPythonReadOurs) {
  const std::string src = MakeFolder(InteropDir("ours_src"), true);
  std::vector<ArchiveEntry> entries;
  for (const std::string& name : {std::string("recording.zst"), std::string("metadata.json"),
                                  std::string("perf_script.out"), kSplittable, kLong}) {
    entries.push_back({name, src + "/" + name});
  }
  const std::string tgz = InteropDir("ours") + "/prof.tar.gz";
  ASSERT_TRUE(WriteTarGz(tgz, entries).ok());
  const std::string by_tar = InteropDir("ours_by_tar");
  ASSERT_EQ(Shell(absl::StrCat("tar -xzf '", tgz, "' -C '", by_tar, "'")), 0);
  ExpectFolderExtracted(by_tar, true);
  const std::string by_python = InteropDir("ours_by_python");
  ASSERT_EQ(Shell(absl::StrCat("python3 -c 'import sys, tarfile\n"
                             "with tarfile.open(sys.argv[1]) as t:\n"
                             "    assert all(m.isreg() and m.mode == 0o644 for m in t)\n"
                             "    t.extractall(sys.argv[2])' '",
                             tgz, "' '", by_python, "'")),
            0);
  ExpectFolderExtracted(by_python, true);
}

}  // namespace
}  // namespace profcpu::archive
