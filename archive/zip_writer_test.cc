// Zips as PerfView's NAME.trace.zip is written, read back by Python's zipfile
// (which checks every CRC-32) and by unzip -t.
#include "archive/zip_writer.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "base/file_io.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"

namespace profcpu::archive {
namespace {

std::string ZipTestDir(const std::string& name) {
  std::string dir = absl::StrCat(::testing::TempDir(), "/", name);
  EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'").c_str()), 0);
  return dir;
}

// Python's zipfile lists `zip`'s entries as "name size" lines (after testzip,
// which reads every entry and checks its CRC), plus whether it saw Zip64.
std::string PythonListing(const std::string& zip) {
  const std::string out = zip + ".listing";
  const std::string command = absl::StrCat(
      "python3 -c 'import sys, zipfile\n"
      "z = zipfile.ZipFile(sys.argv[1])\n"
      "assert z.testzip() is None\n"
      "for i in z.infolist():\n"
      "    print(i.filename, i.file_size, i.compress_type == zipfile.ZIP_DEFLATED, "
      "oct(i.external_attr >> 16))\n"
      "print(\"data\", z.read(z.infolist()[-1]).decode())' '",
      zip, "' > '", out, "'");
  if (std::system(command.c_str()) != 0) return "python3 could not read " + zip;
  return *base::ReadFileBounded(out, 1 << 20);
}

// unzip -t, where installed (Info-ZIP: a second, independent reader).
int UnzipTest(const std::string& zip) {
  return std::system(
      absl::StrCat("! command -v unzip >/dev/null || unzip -tq '", zip, "' >/dev/null").c_str());
}

TEST(ZipWriterTest, WriteArchiveMakesAZipPythonAndUnzipRead) {
  const std::string dir = ZipTestDir("zip_archive");
  ASSERT_TRUE(base::WriteFile(dir + "/big.txt", std::string(3 << 20, 'b')).ok());
  ASSERT_TRUE(base::WriteFile(dir + "/empty", "").ok());
  ASSERT_TRUE(base::WriteFile(dir + "/small.txt", "perf.data.txt contents").ok());
  const std::string zip = dir + "/app.trace.zip";
  ASSERT_TRUE(WriteArchive(zip, ArchiveFormat::kZip,
                           {{"app.trace/big.txt", dir + "/big.txt"},
                            {"app.trace/empty", dir + "/empty"},
                            {"app.trace/perf.data.txt", dir + "/small.txt"}})
                  .ok());
  EXPECT_EQ(PythonListing(zip),
            "app.trace/big.txt 3145728 True 0o100644\n"
            "app.trace/empty 0 True 0o100644\n"
            "app.trace/perf.data.txt 22 True 0o100644\n"
            "data perf.data.txt contents\n");
  struct stat st;
  ASSERT_EQ(::stat(zip.c_str(), &st), 0);
  EXPECT_LT(st.st_size, 100000);  // deflated, not stored
  EXPECT_EQ(UnzipTest(zip), 0);
}

// A file past 4 GiB needs Zip64 records; forced here on small entries, they
// must read the same.
TEST(ZipWriterTest, Zip64RecordsReadTheSame) {
  const std::string dir = ZipTestDir("zip64");
  ASSERT_TRUE(base::WriteFile(dir + "/a", "first entry").ok());
  ASSERT_TRUE(base::WriteFile(dir + "/b", std::string(100000, 'x') + "second").ok());
  const std::string zip = dir + "/out.zip";
  base::UniqueFd fd(::open(zip.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd.valid());
  ZipWriter writer(fd.get(), /*force_zip64=*/true);
  for (const char* name : {"a", "b"}) {
    base::UniqueFd in(::open((dir + "/" + name).c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st;
    ASSERT_EQ(::fstat(in.get(), &st), 0);
    ASSERT_TRUE(writer.AddFile(absl::StrCat("dir/", name), in.get(), name, st.st_size, 0).ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  fd.Reset();
  const std::string listing = PythonListing(zip);
  EXPECT_EQ(listing, "dir/a 11 True 0o100644\ndir/b 100006 True 0o100644\ndata " +
                         std::string(100000, 'x') + "second\n");
  EXPECT_EQ(UnzipTest(zip), 0);
}

}  // namespace
}  // namespace profcpu::archive
