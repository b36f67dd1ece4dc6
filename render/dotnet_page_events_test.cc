#include "render/dotnet_page_events.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fold/dotnet_events_summary.h"
#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

using TimelineEvent = fold::DotnetEventsSummary::TimelineEvent;

TimelineEvent Event(TimelineEvent::Kind kind, uint64_t start_ns, uint64_t duration_ns,
                    std::string label, uint64_t thread_id = 0) {
  TimelineEvent e;
  e.thread_id = thread_id;
  e.kind = kind;
  e.start_ns = start_ns;
  e.duration_ns = duration_ns;
  e.label = std::move(label);
  return e;
}

TEST(PageEventsOfTest, EveryProcessInTimeOrderFromTimeZero) {
  fold::DotnetEventsOutput events;
  events.summaries.resize(2);
  events.summaries[0].pid = 7;
  events.summaries[0].timeline = {
      Event(TimelineEvent::Kind::kGcPause, 1'000'000'000, 3'100'000, "gen2 Induced GC"),
      Event(TimelineEvent::Kind::kExceptions, 4'000'000'000, 0, "App.A thrown")};
  events.summaries[1].pid = 42;
  events.summaries[1].timeline = {
      Event(TimelineEvent::Kind::kGcPause, 500'000'000, 0, "before time 0"),
      Event(TimelineEvent::Kind::kExceptions, 2'500'000'000, 500'000'000, "3 thrown", 26)};
  std::vector<PageEvent> page = PageEventsOf(events, 1'000'000'000);
  ASSERT_EQ(page.size(), 3u);
  EXPECT_EQ(page[0].t, 0);
  EXPECT_EQ(page[0].d, 0.0031);
  EXPECT_EQ(page[0].kind, "gc");
  EXPECT_EQ(page[0].pid, 7u);
  EXPECT_EQ(page[0].label, "gen2 Induced GC");
  EXPECT_EQ(page[1].t, 1.5);
  EXPECT_EQ(page[1].d, 0.5);
  EXPECT_EQ(page[1].kind, "exception");
  EXPECT_EQ(page[1].pid, 42u);
  // The thread the runtime reported it from, not the process.
  EXPECT_EQ(page[1].tid, 26u);
  EXPECT_EQ(page[2].t, 3);
  EXPECT_EQ(page[2].label, "App.A thrown");
}

TEST(PageEventsOfTest, NoProcessesNoEvents) {
  EXPECT_TRUE(PageEventsOf(fold::DotnetEventsOutput(), 0).empty());
}

}  // namespace
}  // namespace profcpu::render
