#include "base/stage_times.h"

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

}  // namespace
}  // namespace profcpu::base
