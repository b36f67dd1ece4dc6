#include "base/rooted_open.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

// A fake target root: root/tmp/ holds a real file and planted symlinks.
class RootedOpenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::string(::testing::TempDir()) + "/rooted_open_root";
    std::system(("rm -rf " + root_).c_str());
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((root_ + "/tmp").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((root_ + "/etc").c_str(), 0755), 0);
    ASSERT_TRUE(WriteFile(root_ + "/tmp/perf-1.map", "1000 10 f\n").ok());
    ASSERT_TRUE(WriteFile(root_ + "/etc/hostname", "inside-the-root\n").ok());
  }
  std::string root_;
};

TEST_F(RootedOpenTest, ReadsAFileInsideTheRoot) {
  auto root = RootDir::Open(root_);
  ASSERT_TRUE(root.ok()) << root.status();
  auto text = (*root)->ReadFile("/tmp/perf-1.map", 1024);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "1000 10 f\n");
}

TEST_F(RootedOpenTest, AbsoluteSymlinkStaysInsideTheRoot) {
  // The target plants tmp/perf-2.map -> /etc/hostname: it must resolve to the
  // target's own /etc/hostname, never the host's.
  ASSERT_EQ(::symlink("/etc/hostname", (root_ + "/tmp/perf-2.map").c_str()), 0);
  auto root = RootDir::Open(root_);
  ASSERT_TRUE(root.ok());
  auto text = (*root)->ReadFile("/tmp/perf-2.map", 1024);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "inside-the-root\n");
}

TEST_F(RootedOpenTest, DotDotCannotClimbOut) {
  ASSERT_EQ(::symlink("../../../../../../etc/passwd", (root_ + "/tmp/perf-3.map").c_str()), 0);
  auto root = RootDir::Open(root_);
  ASSERT_TRUE(root.ok());
  // Clamped to <root>/etc/passwd, which does not exist in the fake root.
  EXPECT_FALSE((*root)->ReadFile("/tmp/perf-3.map", 1024).ok());
  EXPECT_FALSE((*root)->ReadFile("/../../etc/passwd", 1024).ok());
}

TEST_F(RootedOpenTest, ProcMagicLinksAreRefused) {
  ASSERT_EQ(::symlink("/proc/self/root/etc/passwd", (root_ + "/tmp/perf-4.map").c_str()), 0);
  auto root = RootDir::Open(root_);
  ASSERT_TRUE(root.ok());
  EXPECT_FALSE((*root)->ReadFile("/tmp/perf-4.map", 1024).ok());
}

TEST_F(RootedOpenTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ + "/tmp/perf-5.map").c_str(), 0644), 0);
  auto root = RootDir::Open(root_);
  ASSERT_TRUE(root.ok());
  auto text = (*root)->ReadFile("/tmp/perf-5.map", 1024);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(RootedOpenTest, KeptFilesOutliveTheirPath) {
  ASSERT_TRUE(WriteFile(root_ + "/tmp/app", "the binary that ran").ok());
  auto root = RootDir::Open(root_);
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE((*root)->Keep("/tmp/app").ok());
  // A deploy replaces the file; the container's mounts go away.
  ASSERT_EQ(::unlink((root_ + "/tmp/app").c_str()), 0);
  ASSERT_TRUE(WriteFile(root_ + "/tmp/app", "a newer binary").ok());
  auto first = (*root)->OpenFile("/tmp/app");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*ReadFdBounded(first->get(), 100, "kept"), "the binary that ran");
  // Each open has its own offset.
  auto second = (*root)->OpenFile("/tmp/app");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*ReadFdBounded(second->get(), 100, "kept"), "the binary that ran");
}

TEST_F(RootedOpenTest, KeepStaysInsideTheRootAndUsesTheFallbackOnlyWhenNeeded) {
  ASSERT_EQ(::symlink("/etc/hostname", (root_ + "/tmp/planted").c_str()), 0);
  auto root = RootDir::Open(root_);
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE((*root)->Keep("/tmp/planted").ok());
  EXPECT_EQ(*(*root)->ReadFile("/tmp/planted", 100), "inside-the-root\n");
  ASSERT_TRUE(WriteFile(root_ + "/fallback", "from the fallback").ok());
  ASSERT_TRUE((*root)->Keep("/gone", root_ + "/fallback").ok());
  EXPECT_EQ(*(*root)->ReadFile("/gone", 100), "from the fallback");
  EXPECT_FALSE((*root)->Keep("/also-gone").ok());
  EXPECT_FALSE((*root)->Keep("/tmp").ok());  // not a regular file
}

TEST_F(RootedOpenTest, ListsADirectoryInsideTheRoot) {
  ASSERT_EQ(::symlink("/etc", (root_ + "/tmp/etc-link").c_str()), 0);
  auto root = RootDir::Open(root_);
  ASSERT_TRUE(root.ok());
  auto names = (*root)->ListDirectory("/tmp");
  ASSERT_TRUE(names.ok()) << names.status();
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"etc-link", "perf-1.map"}));
  // The symlink to /etc lists the fake root's etc, not the host's.
  auto etc = (*root)->ListDirectory("/tmp/etc-link");
  ASSERT_TRUE(etc.ok());
  EXPECT_EQ(*etc, (std::vector<std::string>{"hostname"}));
}

TEST_F(RootedOpenTest, OpenPathDoesNotFollowAFinalSymlink) {
  ASSERT_EQ(::symlink("/etc/hostname", (root_ + "/tmp/sock").c_str()), 0);
  auto root = RootDir::Open(root_);
  ASSERT_TRUE(root.ok());
  auto fd = (*root)->OpenPath("/tmp/sock");
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat st;
  ASSERT_EQ(::fstat(fd->get(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

// /proc/self is not a magic link: seen from inside any root it still names
// the reader, so a target's link to /proc/self/environ would have made profcpu
// read its own environment (tests/integration/test_hostile.py plants one).
TEST_F(RootedOpenTest, FilesOnProcAreRefused) {
  ASSERT_EQ(::symlink("/proc/self/environ", (root_ + "/tmp/perf-5.map").c_str()), 0);
  auto host = RootDir::Open("/");
  ASSERT_TRUE(host.ok());
  for (const std::string& path :
       {std::string("/proc/self/environ"), std::string("/proc/self/status"),
        root_ + "/tmp/perf-5.map"}) {
    auto fd = (*host)->OpenFile(path);
    EXPECT_EQ(fd.status().code(), absl::StatusCode::kPermissionDenied) << path;
  }
  EXPECT_TRUE((*host)->OpenFile(root_ + "/tmp/perf-1.map").ok());
}

}  // namespace
}  // namespace profcpu::base
