#include "fold/dotnet_events_summary.h"

#include <stdlib.h>
#include <unistd.h>

#include "base/byte_io.h"
#include "base/file_io.h"
#include "nettrace/runtime_events.h"
#include "nettrace/test_writer.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
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

using nettrace::kDotNetRuntimeProvider;
using nettrace::testing_nettrace::BlockHeader;
using nettrace::testing_nettrace::CompressedBlob;
using nettrace::testing_nettrace::ExceptionPayload;
using nettrace::testing_nettrace::GcStartPayload;
using nettrace::testing_nettrace::MetadataPayload;
using nettrace::testing_nettrace::Writer;

// A GC's suspension (gen2, induced) by thread 501 and four exceptions:
// three within 10 ms of each other (two by thread 777, one by 778 between
// them), one by 777 50 ms later. Times in ns (the stream's frequency).
std::string TimelineStream() {
  Writer w;
  std::string meta = BlockHeader(true);
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(1, kDotNetRuntimeProvider, 9, "GCSuspendEEBegin", 1));
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(2, kDotNetRuntimeProvider, 1, "GCStart", 2));
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(3, kDotNetRuntimeProvider, 3, "GCRestartEEEnd", 1));
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(4, kDotNetRuntimeProvider, 80, "ExceptionThrown", 1));
  w.Block("MetadataBlock", meta);
  std::string events = BlockHeader(true);
  constexpr uint8_t kAll = 0x1 | 0x4 | 0x80;  // metadata id, thread, payload size
  events += CompressedBlob(kAll | 0x2, 1, 1, 501, 501, 2'000'000, "");
  events += CompressedBlob(kAll, 2, 0, 0, 501, 100'000, GcStartPayload(1, 2, 1));
  events += CompressedBlob(kAll, 3, 0, 0, 501, 3'000'000, "");
  // t = 10 ms
  events += CompressedBlob(kAll, 4, 0, 0, 777, 4'900'000, ExceptionPayload("App.A", "message"));
  events += CompressedBlob(kAll, 4, 0, 0, 778, 5'000'000, ExceptionPayload("App.A", "message"));
  events += CompressedBlob(kAll, 4, 0, 0, 777, 5'000'000, ExceptionPayload("App.B", "message"));
  // t = 70 ms
  events += CompressedBlob(kAll, 4, 0, 0, 777, 50'000'000, ExceptionPayload("App.A", "message"));
  w.Block("EventBlock", events);
  w.End();
  return w.bytes();
}

TEST(SummarizeDotnetEventsTest, TheTimelineHoldsEachPauseAndEachBurstOfExceptions) {
  char path[] = "/tmp/profcpu-timeline-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  ASSERT_TRUE(base::WriteFile(path, TimelineStream()).ok());
  DotnetEventsSummary s;
  ASSERT_TRUE(SummarizeDotnetEvents(path, 7, &s).ok());
  ::unlink(path);
  ASSERT_TRUE(s.read_error.ok()) << s.read_error;
  EXPECT_EQ(s.gc.count, 1u);
  EXPECT_EQ(s.exceptions.count, 4u);
  ASSERT_EQ(s.timeline.size(), 4u);
  using Kind = DotnetEventsSummary::TimelineEvent::Kind;
  EXPECT_EQ(s.timeline[0].kind, Kind::kGcPause);
  EXPECT_EQ(s.timeline[0].start_ns, 2'000'000u);
  EXPECT_EQ(s.timeline[0].duration_ns, 3'100'000u);
  EXPECT_EQ(s.timeline[0].thread_id, 501u);
  EXPECT_EQ(s.timeline[0].label, "gen2 Induced GC, 3.1 ms paused");
  // Each thread's throws are its own burst, named after it: 777's two
  // within 10 ms, then 778's one between them.
  EXPECT_EQ(s.timeline[1].kind, Kind::kExceptions);
  EXPECT_EQ(s.timeline[1].start_ns, 10'000'000u);
  EXPECT_EQ(s.timeline[1].duration_ns, 10'000'000u);
  EXPECT_EQ(s.timeline[1].count, 2u);
  EXPECT_EQ(s.timeline[1].thread_id, 777u);
  EXPECT_EQ(s.timeline[1].label, "2 thrown, mostly App.A");
  EXPECT_EQ(s.timeline[2].kind, Kind::kExceptions);
  EXPECT_EQ(s.timeline[2].start_ns, 15'000'000u);
  EXPECT_EQ(s.timeline[2].count, 1u);
  EXPECT_EQ(s.timeline[2].thread_id, 778u);
  EXPECT_EQ(s.timeline[2].label, "App.A thrown");
  EXPECT_EQ(s.timeline[3].start_ns, 70'000'000u);
  EXPECT_EQ(s.timeline[3].duration_ns, 0u);
  EXPECT_EQ(s.timeline[3].thread_id, 777u);
  EXPECT_EQ(s.timeline[3].label, "App.A thrown");
}

}  // namespace
}  // namespace profcpu::fold
