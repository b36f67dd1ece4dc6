#include "fleet/query/time_range.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::HasSubstr;

const absl::Time kRangeNow = absl::FromUnixSeconds(1795000000);  // 2026-11-18T...

TEST(TimeRange, RelativeAndNow) {
  EXPECT_EQ(*ParseTimePoint("now", kRangeNow), 1795000000);
  EXPECT_EQ(*ParseTimePoint("-1h", kRangeNow), 1795000000 - 3600);
  EXPECT_EQ(*ParseTimePoint("-30m", kRangeNow), 1795000000 - 1800);
  EXPECT_EQ(*ParseTimePoint("-2d", kRangeNow), 1795000000 - 2 * 86400);
  EXPECT_EQ(*ParseTimePoint("-90s", kRangeNow), 1795000000 - 90);
}

TEST(TimeRange, Rfc3339WithOffsets) {
  EXPECT_EQ(*ParseTimePoint("2026-11-27T14:02:00Z", kRangeNow), 1795788120);
  EXPECT_EQ(*ParseTimePoint("2026-11-27T15:02:00+01:00", kRangeNow), 1795788120);
  EXPECT_EQ(*ParseTimePoint("2026-11-27T14:02:00.75Z", kRangeNow), 1795788120);
  EXPECT_EQ(FormatTimePoint(1795788120), "2026-11-27T14:02:00Z");
}

TEST(TimeRange, RejectsBadInput) {
  for (const char* bad : {"", "-", "-h", "-0h", "-1y", "--1h", "-1.5h", "yesterday",
                          "2026-11-27", "2026-11-27 14:02:00", "-99999999999999999999d",
                          "-4000d"}) {
    EXPECT_FALSE(ParseTimePoint(bad, kRangeNow).ok()) << bad;
  }
  EXPECT_THAT(ParseTimePoint("-1y", kRangeNow).status().message(), HasSubstr("s, m, h or d"));
}

TEST(TimeRange, RangeMustBeNonEmpty) {
  TimeRange range = *ParseTimeRange("-1h", "now", kRangeNow);
  EXPECT_EQ(range.seconds(), 3600);
  EXPECT_THAT(ParseTimeRange("now", "-1h", kRangeNow).status().message(), HasSubstr("empty"));
  EXPECT_FALSE(ParseTimeRange("now", "now", kRangeNow).ok());
}

TEST(TimeRange, DiffSpan) {
  TimeRange span = *ParseTimeSpan("-2h..-1h", kRangeNow);
  EXPECT_EQ(span.from, 1795000000 - 7200);
  EXPECT_EQ(span.to, 1795000000 - 3600);
  span = *ParseTimeSpan("2026-11-27T14:00:00Z..2026-11-27T15:00:00Z", kRangeNow);
  EXPECT_EQ(span.seconds(), 3600);
  for (const char* bad : {"-2h", "..-1h", "-2h..", "-1h..-2h", "a..b"}) {
    EXPECT_FALSE(ParseTimeSpan(bad, kRangeNow).ok()) << bad;
  }
}

}  // namespace
}  // namespace profcpu::fleet
