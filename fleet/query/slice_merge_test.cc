#include "fleet/query/slice_merge.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "fleet/query/shard_tsv.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Two shards; stack 7 on both, 8 only on shard 0, 9 only on shard 1; each
// shard also folded some stacks into its own "other" row. Totals (is_top,
// stack, count, comm range), then the same counts per bucket.
constexpr char kTotals0[] = "1\t7\t15\tapi\tapi\n1\t8\t4\tapi\tapi\n0\t0\t1\tapi\tworker\n";
constexpr char kBuckets0[] = "7\t[100,160]\t[10,5]\n8\t[100]\t[4]\n0\t[100]\t[1]\n";
constexpr char kTotals1[] = "1\t7\t3\tapi\tapi\n1\t9\t6\tcron\tcron\n0\t0\t2\tcron\tcron\n";
constexpr char kBuckets1[] = "7\t[100]\t[3]\n9\t[160]\t[6]\n0\t[160]\t[2]\n";

MergedSlice Merge(uint64_t max_stacks) {
  SliceMerger merger;
  EXPECT_TRUE(merger.AddShardAnswer(0, "a", {kTotals0, kBuckets0}).ok());
  EXPECT_TRUE(merger.AddShardAnswer(1, "b", {kTotals1, kBuckets1}).ok());
  return std::move(merger).Finish(max_stacks);
}

TEST(SliceMerge, SumsByStackAcrossShards) {
  MergedSlice slice = Merge(10);
  ASSERT_EQ(slice.stacks.size(), 3u);
  EXPECT_EQ(slice.stacks[0].id, 7u);
  EXPECT_EQ(slice.stacks[0].count, 18u);
  EXPECT_THAT(slice.stacks[0].buckets, ElementsAre(Pair(100, 13), Pair(160, 5)));
  EXPECT_EQ(slice.stacks[0].comm, "api");
  EXPECT_EQ(slice.stacks[1].id, 9u);
  EXPECT_EQ(slice.stacks[1].comm, "cron");
  EXPECT_EQ(slice.stacks[2].id, 8u);
  EXPECT_EQ(slice.other.count, 3u);
  EXPECT_TRUE(slice.other.several_comms);
  EXPECT_EQ(slice.total, 10u + 4 + 1 + 5 + 3 + 6 + 2);
  EXPECT_THAT(slice.shards_of_stack[7], ElementsAre(0, 1));
  EXPECT_THAT(slice.shards_of_stack[9], ElementsAre(1));
}

TEST(SliceMerge, WithoutTimelineTheTotalsCountInOneBucket) {
  SliceMerger merger;
  ASSERT_TRUE(merger.AddShardAnswer(0, "a", {kTotals0, std::nullopt}).ok());
  ASSERT_TRUE(merger.AddShardAnswer(1, "b", {kTotals1, std::nullopt}).ok());
  MergedSlice slice = std::move(merger).Finish(10);
  ASSERT_EQ(slice.stacks.size(), 3u);
  EXPECT_EQ(slice.stacks[0].id, 7u);
  EXPECT_THAT(slice.stacks[0].buckets, ElementsAre(Pair(0, 18)));
  EXPECT_EQ(slice.total, 31u);
}

// The two answers come from two queries: a window stored between them
// counts as the buckets say, and a stack the totals did not see has no
// known program.
TEST(SliceMerge, BucketsGiveTheCountsTotalsTheProgram) {
  SliceMerger merger;
  ASSERT_TRUE(merger.AddShardAnswer(0, "a", {"1\t7\t1\tapi\tapi\n",
                                             "7\t[100,130]\t[1,2]\n8\t[130]\t[4]\n"})
                  .ok());
  MergedSlice slice = std::move(merger).Finish(10);
  ASSERT_EQ(slice.stacks.size(), 2u);
  EXPECT_EQ(slice.stacks[0].id, 8u);
  EXPECT_EQ(slice.stacks[0].count, 4u);
  EXPECT_TRUE(slice.stacks[0].several_comms);
  EXPECT_EQ(slice.stacks[1].count, 3u);
  EXPECT_EQ(slice.stacks[1].comm, "api");
  EXPECT_EQ(slice.total, 7u);
}

TEST(SliceMerge, TopNFoldsTheRestIntoOtherExactly) {
  MergedSlice slice = Merge(1);
  ASSERT_EQ(slice.stacks.size(), 1u);
  EXPECT_EQ(slice.stacks[0].id, 7u);
  EXPECT_EQ(slice.other.count, 3u + 6 + 4);
  EXPECT_THAT(slice.other.buckets, ElementsAre(Pair(100, 1 + 4), Pair(160, 2 + 6)));
  EXPECT_EQ(slice.total, 31u);
  EXPECT_FALSE(slice.shards_of_stack.contains(9));
}

TEST(SliceMerge, HostileAnswersFailWithTheShard) {
  for (const char* bad : {"1\t7\t10\tx\n",            // a field short
                          "1\t7\t10\tx\tx\tx\n",      // a field too many
                          "1\t7\t-3\tx\tx\n",         // negative count
                          "1\t7\t1e3\tx\tx\n",        // not an integer
                          "2\t7\t1\tx\tx\n",          // is_top not 0/1
                          "1\t7\t10\tx\tx",           // cut short
                          "1\t7\t99999999999999999999\tx\tx\n",
                          "1\t7\t18446744073709551615\tx\tx\n1\t7\t1\tx\tx\n",
                          "1\t7\t1\tx\\\tx\n"}) {
    SliceMerger merger;
    absl::Status status = merger.AddShardAnswer(0, "http://127.0.0.1:1", {bad, std::nullopt});
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_THAT(status.message(), HasSubstr("ClickHouse at http://127.0.0.1:1: slice answer"));
  }
  for (const char* bad : {"7\t[1,2]\t[1]\n",          // arrays of different lengths
                          "7\t[1]\t[1]\t[1]\n",       // a field too many
                          "7\t1\t1\n",                   // not arrays
                          "7\t[4294967296]\t[1]\n",   // a bucket past 2^32
                          "7\t[1,2]\t[1,-1]\n",
                          "7\t[1,2]\t[18446744073709551615,1]\n",
                          "7\t[1]\t[1]"}) {
    SliceMerger merger;
    absl::Status status = merger.AddShardAnswer(0, "http://127.0.0.1:1", {"", bad});
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_THAT(status.message(), HasSubstr("ClickHouse at http://127.0.0.1:1: slice buckets"));
  }
  SliceMerger merger;
  EXPECT_TRUE(merger.AddShardAnswer(0, "a", {"", std::nullopt}).ok());  // no samples: an empty answer
  EXPECT_TRUE(merger.AddShardAnswer(1, "b", {"", ""}).ok());
  EXPECT_EQ(std::move(merger).Finish(5).total, 0u);
}

// The total of all stacks must fit too (each stack's sum is at most it),
// and a refused answer leaves nothing behind.
TEST(SliceMerge, OverflowAcrossStacksRefusedWhole) {
  SliceMerger merger;
  ASSERT_TRUE(merger.AddShardAnswer(0, "a", {"1\t9\t5\tx\tx\n", std::nullopt}).ok());
  EXPECT_FALSE(
      merger.AddShardAnswer(1, "b", {"1\t7\t18446744073709551610\tx\tx\n1\t8\t1\tx\tx\n", std::nullopt})
          .ok());
  EXPECT_FALSE(merger.AddShardAnswer(1, "b", {"", "7\t[1,2]\t[281474976710656,1]\n"}).ok());
  MergedSlice slice = std::move(merger).Finish(5);
  EXPECT_EQ(slice.total, 5u);
  ASSERT_EQ(slice.stacks.size(), 1u);
  EXPECT_EQ(slice.stacks[0].id, 9u);
}

// Answers over a megabyte are read in pieces cut at line ends: rows that
// straddle a cut count once, whole.
TEST(SliceMerge, LargeAnswerReadInPieces) {
  std::string totals, buckets;
  uint64_t total = 0;
  for (int i = 0; i < 100000; ++i) {
    totals += absl::StrCat("1\t", 7 + i, "\t", 1 + i % 5, "\tcommand\tcommand\n");
    buckets += absl::StrCat(7 + i, "\t[", 1000 + i, ",", 2000 + i, "]\t[", 1 + i % 5,
                            ",1]\n");
    total += 1 + i % 5;
  }
  ASSERT_GT(totals.size(), 2u << 20);
  ASSERT_GT(buckets.size(), 2u << 20);
  SliceMerger merger;
  ASSERT_TRUE(merger.AddShardAnswer(0, "a", {totals, std::nullopt}).ok());
  SliceMerger timeline;
  ASSERT_TRUE(timeline.AddShardAnswer(0, "a", {totals, buckets}).ok());
  EXPECT_EQ(std::move(merger).Finish(10).total, total);
  MergedSlice slice = std::move(timeline).Finish(10);
  EXPECT_EQ(slice.total, total + 100000);
  EXPECT_EQ(slice.stacks.size(), 10u);
  // Cut short in its last piece: refused whole.
  SliceMerger cut;
  EXPECT_FALSE(cut.AddShardAnswer(0, "a", {totals.substr(0, totals.size() - 3), std::nullopt}).ok());
  EXPECT_FALSE(cut.AddShardAnswer(0, "a", {totals, buckets.substr(0, buckets.size() - 3)}).ok());
  EXPECT_EQ(std::move(cut).Finish(10).total, 0u);
}

TEST(SliceMerge, NamesFromEveryShard) {
  StackNames names;
  ASSERT_TRUE(names.AddStacksAnswer("a", "7\t[1,2]\n8\t[]\n").ok());
  ASSERT_TRUE(names.AddStacksAnswer("b", "7\t[1,2]\n9\t[3]\n").ok());
  ASSERT_TRUE(names.AddFramesAnswer("a", "1\tmain\tapp\n2\tdo\\tit\\\\x\tapp\n").ok());
  ASSERT_TRUE(names.AddFramesAnswer("b", "3\tschedule\t[kernel.kallsyms]\n").ok());
  EXPECT_THAT(*names.Frames(7), ElementsAre(1, 2));
  EXPECT_TRUE(names.Frames(8)->empty());
  EXPECT_EQ(names.Frame(2)->name, "do\tit\\x");
  EXPECT_EQ(names.Frame(3)->module, "[kernel.kallsyms]");
  EXPECT_EQ(names.Frames(10), nullptr);
  EXPECT_FALSE(names.AddStacksAnswer("a", "7\t1,2\n").ok());
  EXPECT_FALSE(names.AddStacksAnswer("a", "7\t[1,,2]\n").ok());
  EXPECT_FALSE(names.AddStacksAnswer("a", "7\t[1,x]\n").ok());
  std::string deep = "7\t[1";
  for (int i = 0; i < 5000; ++i) deep += ",1";
  EXPECT_THAT(names.AddStacksAnswer("a", deep + "]\n").message(), HasSubstr("more than 4096"));
}

TEST(ShardTsv, RowCap) {
  EXPECT_EQ(ParseShardTsv("a\nb\n", 1, 2)->size(), 2u);
  EXPECT_EQ(ParseShardTsv("a\nb\nc\n", 1, 2).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace profcpu::fleet
