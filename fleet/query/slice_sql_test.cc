#include "fleet/query/slice_sql.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kSqlNow = absl::FromUnixSeconds(1795788120);

TEST(SliceSql, RawUnlessOldOrLong) {
  TimeRange hour{1795788120 - 3600, 1795788120};
  SliceSource source = ChooseSliceSource(hour, kSqlNow, absl::Hours(24 * 7));
  EXPECT_FALSE(source.hourly);
  EXPECT_EQ(source.range.from, hour.from);
  // Older than the raw data kept: the roll-up, widened to whole hours.
  TimeRange old{1795788120 - 10 * 86400 - 100, 1795788120 - 10 * 86400 + 100};
  source = ChooseSliceSource(old, kSqlNow, absl::Hours(24 * 7));
  EXPECT_TRUE(source.hourly);
  EXPECT_EQ(source.range.from % 3600, 0);
  EXPECT_EQ(source.range.to % 3600, 0);
  EXPECT_LE(source.range.from, old.from);
  EXPECT_GE(source.range.to, old.to);
  EXPECT_EQ(source.range.to - source.range.from, 3600);
  // Longer than two days: the roll-up; 24 h: raw.
  EXPECT_TRUE(ChooseSliceSource({1795788120 - 3 * 86400, 1795788120}, kSqlNow, absl::Hours(24 * 7))
                  .hourly);
  EXPECT_FALSE(ChooseSliceSource({1795788120 - 86400, 1795788120}, kSqlNow, absl::Hours(24 * 7))
                   .hourly);
}

TEST(SliceSql, BucketsAtMostTwoThousand) {
  EXPECT_EQ(ChooseBucketSeconds({0, 60}, false), 1);
  EXPECT_EQ(ChooseBucketSeconds({0, 2000}, false), 1);
  EXPECT_EQ(ChooseBucketSeconds({0, 2001}, false), 2);
  EXPECT_EQ(ChooseBucketSeconds({0, 3600}, false), 2);
  EXPECT_EQ(ChooseBucketSeconds({0, 86400}, false), 60);
  EXPECT_EQ(ChooseBucketSeconds({0, 60}, true), 3600);
  for (int64_t seconds : {int64_t{1}, int64_t{7}, int64_t{4001}, int64_t{86400} * 30,
                          int64_t{86400} * 400, int64_t{86400} * 3650}) {
    int64_t step = ChooseBucketSeconds({0, seconds}, false);
    EXPECT_LE((seconds + step - 1) / step, 2000) << seconds;
  }
}

TEST(SliceSql, SliceAggregatesLocalTablesOnly) {
  SliceSpec spec;
  spec.source = {false, {1000, 4600}};
  spec.where_sql = ParseLabelFilter("pod=x'y")->Sql();
  spec.max_stacks = 50;
  spec.bucket_seconds = 2;
  const std::string top = TopStacksSql(spec);
  EXPECT_THAT(top, HasSubstr("SELECT stack_id, sum(stack_samples) AS samples FROM (SELECT "
                             "stack_id, sum(count) AS stack_samples FROM profcpu.samples_local"));
  EXPECT_THAT(top, HasSubstr("GROUP BY stack_id ORDER BY samples DESC, stack_id LIMIT 50 "));
  const std::string totals = SliceTotalsSql(spec, {3, 5});
  const std::string buckets = SliceBucketsSql(spec, {3, 5});
  EXPECT_THAT(totals, HasSubstr("stack_id IN (3,5) AS is_top"));
  EXPECT_THAT(buckets, HasSubstr("if(stack_id IN (3,5), stack_id, toUInt64(0)) AS stack"));
  for (const std::string& sql : {totals, buckets}) {
    EXPECT_THAT(sql, HasSubstr("FROM profcpu.samples_local WHERE time >= toDateTime(1000) AND "
                               "time < toDateTime(4600) AND (pod = 'x\\'y')"));
    EXPECT_THAT(sql, Not(HasSubstr("JOIN")));
    EXPECT_THAT(sql, Not(HasSubstr("toStartOfInterval")));
    EXPECT_THAT(sql, Not(HasSubstr("profcpu.samples ")));  // never the Distributed table
  }
  EXPECT_THAT(totals, HasSubstr("min(comm) AS first_comm, max(comm) AS last_comm"));
  EXPECT_THAT(totals, HasSubstr("GROUP BY stack_id) GROUP BY is_top"));
  // The whole hours inside the range from the roll-up, the rest from raw
  // rows, the hours drawn by the server (its time zone's hours).
  for (const std::string& sql : {top, totals}) {
    EXPECT_THAT(sql, HasSubstr("AND NOT (time >= toStartOfHour(toDateTime(4599)) AND time < "
                               "toStartOfHour(toDateTime(4600))) GROUP BY stack_id UNION ALL"));
    EXPECT_THAT(sql, HasSubstr("FROM profcpu.samples_hourly_local WHERE hour >= toDateTime(0) AND "
                               "hour < toDateTime(4600) AND hour >= toStartOfHour(toDateTime(4599)) "
                               "AND hour < toStartOfHour(toDateTime(4600)) AND (pod = 'x\\'y')"));
  }
  EXPECT_THAT(buckets, Not(HasSubstr("hourly")));
  EXPECT_THAT(totals, HasSubstr("GROUP BY is_top, stack FORMAT"));
  EXPECT_THAT(buckets, HasSubstr("intDiv(toUInt32(time), 2) * 2 AS bucket"));
  EXPECT_THAT(buckets, HasSubstr("groupArray(bucket), groupArray(samples)"));
  // The comm range is the totals' alone: per cell it costs as much as the cells.
  EXPECT_THAT(buckets, Not(HasSubstr("comm")));

  spec.source = {true, {0, 7200}};
  spec.bucket_seconds = 3600;
  EXPECT_THAT(SliceTotalsSql(spec, {}),
              HasSubstr("FROM profcpu.samples_hourly_local WHERE hour >= toDateTime(0)"));
  EXPECT_THAT(SliceBucketsSql(spec, {}), HasSubstr("intDiv(toUInt32(hour), 3600) * 3600"));
}

TEST(SliceSql, NamesOnTheSameShard) {
  EXPECT_EQ(StacksSql({7, 9}),
            "SELECT id, any(frame_ids) FROM profcpu.stacks_local WHERE id IN (7,9) GROUP BY id "
            "FORMAT TabSeparated");
  EXPECT_THAT(FramesSql({7}), HasSubstr("FROM profcpu.frames_local WHERE id IN (SELECT "
                                        "arrayJoin(frame_ids) FROM profcpu.stacks_local WHERE "
                                        "id IN (7))"));
  EXPECT_THAT(StacksSql({}), HasSubstr("IN (0)"));
}

TEST(SliceSql, LabelValues) {
  EXPECT_THAT(LabelValuesSql({false, {0, 10}}, "1", "pod", 5),
              HasSubstr("SELECT pod, sum(count) AS samples FROM profcpu.samples_local WHERE "
                        "time >= toDateTime(0) AND time < toDateTime(10) AND (1) GROUP BY pod "
                        "ORDER BY samples DESC, pod LIMIT 5"));
}

}  // namespace
}  // namespace profcpu::fleet
