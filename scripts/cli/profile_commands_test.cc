// collect and record as their callers see them: exit codes, and no run
// folder (nor -out folder) left behind when nothing was sampled. The runs
// that sample are tested end to end (tests/integration/test_collect.py,
// test_cli.py); these need no perf events.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scripts/cli/commands.h"

namespace profcpu::cli {
namespace {

class ProfileCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/profile_commands_test.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    top_ = dir;
    out_ = absl::StrCat(top_, "/profilings/nested");
  }
  void TearDown() override { (void)std::system(absl::StrCat("rm -rf ", top_).c_str()); }
  bool Exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
  }
  std::string top_;
  std::string out_;
};

TEST_F(ProfileCommandsTest, BadFlagsAreUsageErrors) {
  EXPECT_EQ(RunCollect({"-pid", "1", "-freq", "0", "-out", out_}), kExitUsage);
  EXPECT_EQ(RunCollect({"-pid", "1", "-a", "-out", out_}), kExitUsage);
  EXPECT_EQ(RunCollect({"-out", out_}), kExitUsage);  // no target
  EXPECT_EQ(RunCollect({"-pid", "1", "extra", "-out", out_}), kExitUsage);
  EXPECT_EQ(RunRecord({"-out", out_}), kExitUsage);  // no command
  EXPECT_EQ(RunRecord({"-mode", "wall", "-event", "instructions", "-out", out_, "--", "true"}),
            kExitUsage);
  EXPECT_FALSE(Exists(absl::StrCat(top_, "/profilings")));
}

TEST_F(ProfileCommandsTest, HelpIsNotAnError) {
  EXPECT_EQ(RunCollect({"-help"}), kExitOk);
  EXPECT_EQ(RunRecord({"-help"}), kExitOk);
}

TEST_F(ProfileCommandsTest, AMissingTargetLeavesNoFolderBehind) {
  // A pid far above pid_max: no such process.
  EXPECT_EQ(RunCollect({"-pid", "1000000000", "-out", out_}), kExitFailure);
  EXPECT_FALSE(Exists(absl::StrCat(top_, "/profilings")));
}

TEST_F(ProfileCommandsTest, RecordExitsAsAShellWouldWhenTheCommandCannotRun) {
  EXPECT_EQ(RunRecord({"-out", out_, "--", "/no/such/program"}), kExitCommandNotFound);
  const std::string not_executable = absl::StrCat(top_, "/plain.txt");
  ASSERT_EQ(std::system(absl::StrCat("echo hi > ", not_executable).c_str()), 0);
  EXPECT_EQ(RunRecord({"-out", out_, "--", not_executable}), kExitCommandNotExecutable);
  EXPECT_FALSE(Exists(absl::StrCat(top_, "/profilings")));
}

}  // namespace
}  // namespace profcpu::cli
