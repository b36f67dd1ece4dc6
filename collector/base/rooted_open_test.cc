#include "collector/base/rooted_open.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "collector/base/file_io.h"
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

}  // namespace
}  // namespace profcpu::base
