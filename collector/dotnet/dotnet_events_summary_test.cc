#include "collector/dotnet/dotnet_events_summary.h"

#include <stdlib.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace profcpu::collector::dotnet {
namespace {

TEST(DotnetEventsHeadlineTest, CountsPausesShareAndTheMostThrownType) {
  DotnetEventsSummary s;
  s.window_ms = 10'000;
  s.gc.count = 38;
  s.gc.pause_ms_total = 412.3;
  s.exceptions.count = 2110;
  s.exceptions.by_type = {{"System.OperationCanceledException", 2000},
                          {"System.IO.IOException", 110}};
  EXPECT_EQ(DotnetEventsHeadline(s),
            "38 GCs, 412 ms paused (4.1%), 2,110 exceptions (mostly "
            "System.OperationCanceledException)");
}

TEST(DotnetEventsHeadlineTest, OneTypeIsAllAndNoWindowNoShare) {
  DotnetEventsSummary s;
  s.gc.count = 1;
  s.exceptions.count = 1;
  s.exceptions.by_type = {{"App.Custom", 1}};
  EXPECT_EQ(DotnetEventsHeadline(s), "1 GC, 0 ms paused, 1 exception (all App.Custom)");
}

TEST(GcReasonNameTest, NamesTheRuntimesReasonsAndNumbersTheRest) {
  EXPECT_EQ(GcReasonName(0), "AllocSmall");
  EXPECT_EQ(GcReasonName(1), "Induced");
  EXPECT_EQ(GcReasonName(13), "LowMemoryHostBlocking");
  EXPECT_EQ(GcReasonName(99), "reason 99");
}

TEST(SummarizeDotnetEventsTest, AMissingFileIsAnError) {
  DotnetEventsSummary s;
  EXPECT_FALSE(SummarizeDotnetEvents("/nonexistent/1.nettrace", 1, &s).ok());
}

TEST(SummarizeDotnetEventsTest, AFileThatIsNotNettraceGivesAReadError) {
  char path[] = "/tmp/profcpu-events-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "not a trace", 11), 11);
  ::close(fd);
  DotnetEventsSummary s;
  ASSERT_TRUE(SummarizeDotnetEvents(path, 7, &s).ok());
  ::unlink(path);
  EXPECT_EQ(s.pid, 7u);
  EXPECT_FALSE(s.read_error.ok());
  EXPECT_EQ(s.events, 0u);
}

}  // namespace
}  // namespace profcpu::collector::dotnet
