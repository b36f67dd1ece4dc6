#include "base/run_log.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

TEST(RunLogTest, LinesBeforeOpenAreWrittenFirstAndWarningsAreKept) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/run_log_", ::getpid(), ".log");
  ::unlink(path.c_str());
  {
    RunLog log;
    log.Info("before the folder existed");
    ASSERT_TRUE(log.Open(path));
    log.Warn("something the user must see");
    log.Info("after");
    EXPECT_EQ(log.warnings(), (std::vector<std::string>{"something the user must see"}));
  }
  auto text = ReadFileBounded(path, 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status();
  const size_t before = text->find(" info before the folder existed\n");
  const size_t warning = text->find(" warning something the user must see\n");
  const size_t after = text->find(" info after\n");
  ASSERT_NE(before, std::string::npos) << *text;
  ASSERT_NE(warning, std::string::npos) << *text;
  ASSERT_NE(after, std::string::npos) << *text;
  EXPECT_LT(before, warning);
  EXPECT_LT(warning, after);
}

TEST(RunLogTest, OpenFailsOnAnUnwritablePath) {
  RunLog log;
  EXPECT_FALSE(log.Open("/nonexistent-dir/profcpu.log"));
}

}  // namespace
}  // namespace profcpu::base
