#include "collector/perf_map_tailer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

// A directory standing for a process's root (with /tmp) and a run folder's
// jit/ directory beside it.
class PerfMapTailerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = absl::StrCat(::testing::TempDir(), "/tailer_", ::getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ::mkdir(base_.c_str(), 0755);
    ::mkdir((base_ + "/root").c_str(), 0755);
    ::mkdir((base_ + "/root/tmp").c_str(), 0755);
    auto root = base::RootDir::Open(base_ + "/root");
    ASSERT_TRUE(root.ok()) << root.status();
    root_ = *root;
  }
  void TearDown() override { std::system(absl::StrCat("rm -rf '", base_, "'").c_str()); }

  std::string MapPath() const { return base_ + "/root/tmp/perf-7.map"; }
  std::string CopyPath() const { return base_ + "/jit/perf-42.map"; }
  std::string Copy() const {
    auto text = base::ReadFileBounded(CopyPath(), 1 << 20);
    return text.ok() ? *text : "<no copy>";
  }
  void Append(const std::string& text) const {
    base::UniqueFd fd(::open(MapPath().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644));
    ASSERT_TRUE(fd.valid());
    ASSERT_TRUE(base::WriteAll(fd.get(), text, "map").ok());
  }
  std::unique_ptr<PerfMapTailer> Tailer(PerfMapTailer::Limits limits = {}) {
    auto tailer = std::make_unique<PerfMapTailer>(base_ + "/jit", limits);
    // Process 42 sees itself as 7 and writes /tmp/perf-7.map in its root.
    tailer->Watch(42, root_, "/tmp/perf-7.map", 1000);
    return tailer;
  }

  std::string base_;
  std::shared_ptr<base::RootDir> root_;
};

TEST_F(PerfMapTailerTest, CopiesGrowthEachTickAndRenamesAtFinish) {
  auto tailer = Tailer();
  tailer->Tick();  // not there yet
  Append("1000 10 first\n");
  tailer->Tick();
  Append("2000 10 sec");  // a line half written ...
  tailer->Tick();
  Append("ond\n");  // ... and finished
  std::vector<TailedPerfMap> maps = tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 first\n2000 10 second\n");
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_TRUE(maps[0].found);
  EXPECT_TRUE(maps[0].kept);
  EXPECT_EQ(maps[0].pid, 42u);
  EXPECT_EQ(maps[0].path, "/tmp/perf-7.map");
  EXPECT_EQ(maps[0].bytes_copied, 29u);
  EXPECT_EQ(maps[0].restarts, 0u);
  EXPECT_TRUE(maps[0].problem.empty());
  EXPECT_TRUE(tailer->TakeWarnings().empty());
  struct stat st;
  EXPECT_NE(::stat((CopyPath() + ".partial").c_str(), &st), 0);
}

TEST_F(PerfMapTailerTest, KeepsWhatWasWrittenAfterTheMapWasUnlinked) {
  base::UniqueFd writer(::open(MapPath().c_str(), O_WRONLY | O_CREAT, 0644));
  ASSERT_TRUE(base::WriteAll(writer.get(), "1000 10 before\n", "map").ok());
  auto tailer = Tailer();
  tailer->Tick();
  ASSERT_EQ(::unlink(MapPath().c_str()), 0);
  // The runtime still holds its descriptor and writes on, then exits.
  ASSERT_TRUE(base::WriteAll(writer.get(), "2000 10 after\n", "map").ok());
  writer.Reset();
  std::vector<TailedPerfMap> maps = tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 before\n2000 10 after\n");
  EXPECT_TRUE(maps[0].removed);
}

TEST_F(PerfMapTailerTest, LooksAtOnceWhenWatchingBegins) {
  Append("1000 10 early\n");
  auto tailer = Tailer();  // no tick before the map goes
  ASSERT_EQ(::unlink(MapPath().c_str()), 0);
  tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 early\n");
}

TEST_F(PerfMapTailerTest, NeverFoundLeavesNoCopy) {
  auto tailer = Tailer();
  tailer->Tick();
  std::vector<TailedPerfMap> maps = tailer->Finish();
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_FALSE(maps[0].found);
  EXPECT_EQ(maps[0].watched_from_ns, 1000u);
  EXPECT_EQ(Copy(), "<no copy>");
}

TEST_F(PerfMapTailerTest, TruncatedMapIsCopiedAgainOnALineOfItsOwn) {
  Append("1000 10 old\n2000 10 par");
  auto tailer = Tailer();
  tailer->Tick();
  ASSERT_EQ(::truncate(MapPath().c_str(), 0), 0);
  Append("3000 10 new\n");
  std::vector<TailedPerfMap> maps = tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 old\n2000 10 par\n3000 10 new\n");
  EXPECT_EQ(maps[0].restarts, 1u);
}

TEST_F(PerfMapTailerTest, MapRewrittenPastTheCopiedLengthWithinATickIsCopiedAgain) {
  // A stale map of an earlier process with this pid, then the runtime's
  // fopen("w") and a burst of lines, all between two ticks.
  Append("1000 10 stale\n");
  auto tailer = Tailer();
  tailer->Tick();
  ASSERT_TRUE(base::WriteFile(MapPath(), "2000 10 fresh_one\n3000 10 fresh_two\n").ok());
  std::vector<TailedPerfMap> maps = tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 stale\n2000 10 fresh_one\n3000 10 fresh_two\n");
  EXPECT_EQ(maps[0].restarts, 1u);
}

TEST_F(PerfMapTailerTest, ReplacedMapIsCopiedAfterTheOldOne) {
  // The .NET runtime recreates its map when perf maps are turned on.
  base::UniqueFd old_writer(::open(MapPath().c_str(), O_WRONLY | O_CREAT, 0644));
  ASSERT_TRUE(base::WriteAll(old_writer.get(), "1000 10 old\n", "map").ok());
  auto tailer = Tailer();
  tailer->Tick();
  // Written to the old file after the last tick: still copied, before the new one.
  ASSERT_TRUE(base::WriteAll(old_writer.get(), "1500 10 late\n", "map").ok());
  const std::string fresh = base_ + "/root/tmp/fresh";
  ASSERT_TRUE(base::WriteFile(fresh, "2000 10 new\n").ok());
  ASSERT_EQ(::rename(fresh.c_str(), MapPath().c_str()), 0);
  tailer->Tick();
  std::vector<TailedPerfMap> maps = tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 old\n1500 10 late\n2000 10 new\n");
  EXPECT_EQ(maps[0].restarts, 1u);
  EXPECT_FALSE(maps[0].removed);
}

TEST_F(PerfMapTailerTest, RefusesAFifoWithoutBlocking) {
  ASSERT_EQ(::mkfifo(MapPath().c_str(), 0644), 0);
  auto tailer = Tailer();
  tailer->Tick();
  tailer->Tick();
  std::vector<std::string> warnings = tailer->TakeWarnings();
  ASSERT_EQ(warnings.size(), 1u);  // once, not every tick
  EXPECT_EQ(warnings[0], "not reading /tmp/perf-7.map of pid 42: it is not a regular file");
  std::vector<TailedPerfMap> maps = tailer->Finish();
  EXPECT_FALSE(maps[0].found);
  EXPECT_EQ(maps[0].problem, "it is not a regular file");
  EXPECT_EQ(Copy(), "<no copy>");
}

TEST_F(PerfMapTailerTest, FifoReplacingAFoundMapKeepsTheCopy) {
  Append("1000 10 kept\n");
  auto tailer = Tailer();
  tailer->Tick();
  ASSERT_EQ(::unlink(MapPath().c_str()), 0);
  ASSERT_EQ(::mkfifo(MapPath().c_str(), 0644), 0);
  tailer->Tick();
  tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 kept\n");
}

TEST_F(PerfMapTailerTest, SymlinksResolveInsideTheRoot) {
  // Outside the root, where a naive reader of ROOT/tmp/perf-7.map would land.
  ASSERT_TRUE(base::WriteFile(base_ + "/secret.map", "1000 10 HOST_SECRET\n").ok());
  ASSERT_EQ(::symlink((base_ + "/secret.map").c_str(), MapPath().c_str()), 0);
  auto tailer = Tailer();
  tailer->Tick();
  ASSERT_EQ(::unlink(MapPath().c_str()), 0);
  ASSERT_EQ(::symlink("../../secret.map", MapPath().c_str()), 0);
  tailer->Tick();
  std::vector<TailedPerfMap> maps = tailer->Finish();
  EXPECT_FALSE(maps[0].found);
  EXPECT_EQ(Copy(), "<no copy>");
}

TEST_F(PerfMapTailerTest, StopsAtTheFileCapWithAWarning) {
  Append("1000 10 a_long_function_name\n2000 10 b\n");
  auto tailer = Tailer({.max_file_bytes = 20});
  tailer->Tick();
  Append("3000 10 c\n");
  std::vector<TailedPerfMap> maps = tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 a_long_funct");
  EXPECT_EQ(maps[0].bytes_copied, 20u);
  EXPECT_NE(maps[0].problem.find("limit"), std::string::npos) << maps[0].problem;
  std::vector<std::string> warnings = tailer->TakeWarnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("/tmp/perf-7.map of pid 42"), std::string::npos) << warnings[0];
}

TEST_F(PerfMapTailerTest, TheLineBreakBeforeARestartStaysWithinTheCap) {
  Append("1000 10 abc");  // 11 bytes, no line break, the whole cap
  auto tailer = Tailer({.max_file_bytes = 11});
  tailer->Tick();
  ASSERT_EQ(::truncate(MapPath().c_str(), 0), 0);
  Append("2000 10 new\n");
  std::vector<TailedPerfMap> maps = tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 abc");
  EXPECT_NE(maps[0].problem.find("limit"), std::string::npos) << maps[0].problem;
}

TEST_F(PerfMapTailerTest, ATickCopiesAtMostItsCapAndTheLastPassTheRest) {
  Append("1000 10 first\n2000 10 second\n");
  auto tailer = Tailer({.max_tick_bytes = 8});
  tailer->Tick();
  EXPECT_EQ(base::ReadFileBounded(CopyPath() + ".partial", 1024).value_or(""), "1000 10 ");
  tailer->Finish();
  EXPECT_EQ(Copy(), "1000 10 first\n2000 10 second\n");
}

TEST_F(PerfMapTailerTest, StopsWhenTheDiskHasLessThanTheReserve) {
  Append("1000 10 first\n");
  auto tailer = Tailer({.min_free_bytes = UINT64_MAX});  // no disk has that much free
  tailer->Tick();
  tailer->Tick();
  std::vector<std::string> warnings = tailer->TakeWarnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("kept for the recording"), std::string::npos) << warnings[0];
  std::vector<TailedPerfMap> maps = tailer->Finish();
  // The map is still there: the symbolizer reads it in place, not a copy cut short.
  EXPECT_EQ(Copy(), "<no copy>");
  EXPECT_TRUE(maps[0].found);
  EXPECT_FALSE(maps[0].kept);
  EXPECT_NE(maps[0].problem.find("read in place"), std::string::npos) << maps[0].problem;
}

TEST_F(PerfMapTailerTest, WatchesAtMostMaxFiles) {
  auto tailer = Tailer({.max_files = 1});
  tailer->Watch(43, root_, "/tmp/perf-8.map", 2000);
  tailer->Watch(44, root_, "/tmp/perf-9.map", 2000);
  tailer->Watch(45, nullptr, "/tmp/perf-10.map", 2000);
  EXPECT_TRUE(tailer->Knows(42));
  EXPECT_TRUE(tailer->Knows(43));  // passed over, not watched
  EXPECT_TRUE(tailer->Knows(45));
  EXPECT_FALSE(tailer->Knows(46));
  EXPECT_EQ(tailer->TakeWarnings().size(), 1u);
  EXPECT_EQ(tailer->Finish().size(), 1u);
}

TEST_F(PerfMapTailerTest, LooksUpAtMostMaxLookupsPerTick) {
  auto tailer = Tailer({.max_lookups_per_tick = 1});
  tailer->Watch(43, root_, "/tmp/perf-8.map", 2000);
  Append("1000 10 seven\n");
  ASSERT_TRUE(base::WriteFile(base_ + "/root/tmp/perf-8.map", "1000 10 eight\n").ok());
  tailer->Tick();  // looks for pid 42's map only
  struct stat st;
  EXPECT_EQ(::stat((base_ + "/jit/perf-42.map.partial").c_str(), &st), 0);
  EXPECT_NE(::stat((base_ + "/jit/perf-43.map.partial").c_str(), &st), 0);
  tailer->Tick();  // then pid 43's
  EXPECT_EQ(::stat((base_ + "/jit/perf-43.map.partial").c_str(), &st), 0);
  tailer->Finish();
}

TEST(DescribeTailedPerfMapTest, SaysWhatBecameOfTheMap) {
  TailedPerfMap map;
  map.pid = 42;
  map.path = "/tmp/perf-7.map";
  map.looks = 3;
  EXPECT_EQ(DescribeTailedPerfMap(map),
            "no /tmp/perf-7.map of pid 42 at any of 3 looks while it ran");
  map.problem = "it is not a regular file";
  EXPECT_EQ(DescribeTailedPerfMap(map),
            "no /tmp/perf-7.map of pid 42 at any of 3 looks while it ran (it is not a regular "
            "file)");
  map.problem.clear();
  map.found = map.kept = map.removed = true;
  map.bytes_copied = 9;
  map.restarts = 2;
  EXPECT_EQ(DescribeTailedPerfMap(map),
            "kept 9 bytes of /tmp/perf-7.map of pid 42 as jit/perf-42.map; it was gone from its "
            "path by the end; it was truncated or replaced 2 time(s), each copied after the last");
}

}  // namespace
}  // namespace profcpu::collector
