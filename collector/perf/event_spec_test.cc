#include "collector/perf/event_spec.h"

#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

TEST(EventSpecTest, KernelLimitIsPositive) { EXPECT_GT(KernelMaxSampleRate(), 0); }

}  // namespace
}  // namespace profcpu::collector
