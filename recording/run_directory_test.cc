#include "recording/run_directory.h"

#include <sys/stat.h>

#include <cstdlib>

#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::recording {
namespace {

TEST(RunDirectoryTest, NamesRunsByTimeAndNeverReusesAFolder) {
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

TEST(RunDirectoryTest, AFileInTheWayIsAClearError) {
  std::string file = std::string(::testing::TempDir()) + "/output_dir_not_a_dir";
  ASSERT_TRUE(base::WriteFile(file, "x").ok());
  auto run = CreateRunDirectory(file + "/sub", 0);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("output_dir_not_a_dir"), absl::string_view::npos);
}

TEST(RunDirectoryTest, WhatARunCreatedCanBeTakenBack) {
  std::string top = std::string(::testing::TempDir()) + "/output_dir_taken_back";
  std::system(("rm -rf '" + top + "'").c_str());
  ASSERT_EQ(::mkdir(top.c_str(), 0755), 0);
  const std::vector<std::string> missing = MissingDirectories(top + "/x/y/");
  EXPECT_EQ(missing, (std::vector<std::string>{top + "/x/y", top + "/x"}));
  auto run = CreateRunDirectory(top + "/x/y", 0);
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(::rmdir(run->c_str()), 0);
  RemoveEmptyDirectories(missing);
  struct stat st;
  EXPECT_NE(::stat((top + "/x").c_str(), &st), 0);
  EXPECT_EQ(::stat(top.c_str(), &st), 0);  // it was there before: it stays
  EXPECT_TRUE(MissingDirectories(top).empty());
}

TEST(RunDirectoryTest, AnUnstartedRunLeavesNothingBehind) {
  std::string top = std::string(::testing::TempDir()) + "/run_directory_unstarted";
  std::system(("rm -rf '" + top + "'").c_str());
  auto run = CreateRunDirectory(top, 1795312373);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(::mkdir((*run + "/dotnet").c_str(), 0755), 0);
  ASSERT_TRUE(base::WriteFile(*run + "/recording.zst", "header").ok());
  ASSERT_TRUE(base::WriteFile(*run + "/profcpu.log", "log").ok());
  RemoveUnstartedRun(*run);
  struct stat st;
  EXPECT_NE(::stat(run->c_str(), &st), 0);
  // A folder holding anything else is not a run that never started: kept.
  auto other = CreateRunDirectory(top, 1795312373);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(base::WriteFile(*other + "/flamegraph.svg", "<svg/>").ok());
  RemoveUnstartedRun(*other);
  EXPECT_EQ(::stat(other->c_str(), &st), 0);
  std::system(("rm -rf '" + top + "'").c_str());
}

}  // namespace
}  // namespace profcpu::recording
