#include "base/background_task.h"

#include <atomic>

#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

TEST(BackgroundTaskTest, WaitReturnsTheTasksStatus) {
  BackgroundTask task([] { return absl::DataLossError("disk full"); });
  EXPECT_EQ(task.Wait(), absl::DataLossError("disk full"));
  EXPECT_EQ(task.Wait(), absl::DataLossError("disk full"));  // joined once, kept
}

TEST(BackgroundTaskTest, LeavingTheScopeJoins) {
  std::atomic<bool> ran{false};
  {
    BackgroundTask task([&ran] {
      ran = true;
      return absl::OkStatus();
    });
  }
  EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace profcpu::base
