#include "scripts/cli/output_dir.h"

#include <sys/stat.h>

#include <cstdlib>

#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::cli {
namespace {

TEST(OutputDirTest, NamesRunsByTimeAndNeverReusesAFolder) {
  std::string top = std::string(::testing::TempDir()) + "/output_dir_test";
  std::system(("rm -rf '" + top + "'").c_str());
  std::string parent = top + "/a/b";
  std::time_t when = 1795312373;  // fixed instant
  auto first = CreateRunDirectory(parent, when);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = CreateRunDirectory(parent, when);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(*first, *second);
  EXPECT_EQ(*second, *first + "-2");
  // HH-MM-SS_YYYY-MM-DD
  std::string name = first->substr(parent.size() + 1);
  EXPECT_EQ(name.size(), 19u);
  EXPECT_EQ(name[2], '-');
  EXPECT_EQ(name[8], '_');
}

TEST(OutputDirTest, AFileInTheWayIsAClearError) {
  std::string file = std::string(::testing::TempDir()) + "/output_dir_not_a_dir";
  ASSERT_TRUE(base::WriteFile(file, "x").ok());
  auto run = CreateRunDirectory(file + "/sub", 0);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("output_dir_not_a_dir"), absl::string_view::npos);
}

}  // namespace
}  // namespace profcpu::cli
