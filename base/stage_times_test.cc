#include "base/stage_times.h"

#include <stdlib.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

using ::testing::MatchesRegex;

TEST(StageTimesTest, SummaryListsEveryStageInOrder) {
  StageTimes times;
  times.Done("replay");
  times.Done("symbols");
  EXPECT_THAT(times.Summary(),
              MatchesRegex("outputs built in [0-9.e-]+ s \\(replay [0-9.e-]+, symbols [0-9.e-]+\\)"));
}

TEST(StageTimesTest, NoStageYet) {
  EXPECT_THAT(StageTimes().Summary(), MatchesRegex("outputs built in [0-9.e-]+ s \\(\\)"));
}

TEST(StageTimesTest, ParallelLineHasTheFormBenchReads) {
  ParallelStage p;
  p.wall = 1.5;
  p.serial = 0.25;
  p.tasks = 30;
  p.threads = 16;
  p.longest_task = 0.0625;
  p.task_cpu = 1.75;
  EXPECT_EQ(ParallelStageLine("replay", p),
            "parallel replay: 1.500 s wall, serial 0.250 s, 30 tasks on 16 threads, "
            "longest task 0.062 s, task CPU 1.750 s");
}

TEST(StageTimesTest, WorkerThreadsFollowsTheEnvironment) {
  setenv("PROFCPU_THREADS", "3", 1);
  EXPECT_EQ(WorkerThreads(), 3);
  setenv("PROFCPU_THREADS", "1", 1);
  EXPECT_EQ(WorkerThreads(), 1);
  // Nonsense falls back to the usable cores, never more than 16.
  setenv("PROFCPU_THREADS", "zero", 1);
  const int usable = WorkerThreads();
  EXPECT_GE(usable, 1);
  EXPECT_LE(usable, 16);
  unsetenv("PROFCPU_THREADS");
  EXPECT_EQ(WorkerThreads(), usable);
}

}  // namespace
}  // namespace profcpu::base
