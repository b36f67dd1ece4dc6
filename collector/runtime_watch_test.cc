#include "collector/runtime_watch.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

TEST(DueTest, OncePerInterval) {
  uint64_t last = 0;
  EXPECT_TRUE(Due(100, 100, &last));  // the first time, from 0
  EXPECT_EQ(last, 100u);
  EXPECT_FALSE(Due(199, 100, &last));
  EXPECT_EQ(last, 100u);
  EXPECT_TRUE(Due(200, 100, &last));
  EXPECT_EQ(last, 200u);
}

TEST(RuntimeWatchTest, StartsOnlyWhatTheOptionsAskFor) {
  CollectionOptions options;  // no log, no copy folder: nothing to start
  RuntimeWatch watch(options);
  watch.StartDotnetSessions({::getpid()});
  watch.StartPerfMapCopies();
  EXPECT_EQ(watch.tailer(), nullptr);
  watch.NoteNewProcess(::getpid());
  watch.Tick(1'000'000'000);
  watch.StopSessions(0);
  std::vector<TailedPerfMap> maps;
  std::vector<std::string> warnings, notes;
  watch.FinishPerfMapCopies(&maps, &warnings, &notes);
  EXPECT_TRUE(maps.empty());
  EXPECT_TRUE(notes.empty());
}

TEST(RuntimeWatchTest, CopiesPerfMapsIntoTheCopyFolder) {
  CollectionOptions options;
  options.jit_copy_dir = absl::StrCat(::testing::TempDir(), "/runtime_watch_", ::getpid());
  options.perf_map_copy_max_bytes = 4096;
  RuntimeWatch watch(options);
  watch.StartPerfMapCopies();
  ASSERT_NE(watch.tailer(), nullptr);
  // A process whose map is never found still gets a note.
  watch.tailer()->Watch(99999999, nullptr, "/tmp/perf-99999999.map", 1);
  std::vector<TailedPerfMap> maps;
  std::vector<std::string> warnings, notes;
  watch.FinishPerfMapCopies(&maps, &warnings, &notes);
  EXPECT_EQ(maps.size(), notes.size());
}

}  // namespace
}  // namespace profcpu::collector
