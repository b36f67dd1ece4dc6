#include "fleet/query/slice_merge.h"

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
// shard also folded some stacks into its own "other" row.
constexpr char kShard0[] =
    "100\t1\t7\t10\tapi\tapi\n"
    "100\t1\t8\t4\tapi\tapi\n"
    "100\t0\t0\t1\tapi\tworker\n"
    "160\t1\t7\t5\tapi\tapi\n";
constexpr char kShard1[] =
    "100\t1\t7\t3\tapi\tapi\n"
    "160\t1\t9\t6\tcron\tcron\n"
    "160\t0\t0\t2\tcron\tcron\n";

MergedSlice Merge(uint64_t max_stacks) {
  SliceMerger merger;
  EXPECT_TRUE(merger.AddShardAnswer(0, "a", kShard0).ok());
  EXPECT_TRUE(merger.AddShardAnswer(1, "b", kShard1).ok());
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
  for (const char* bad : {"1\t1\t7\t10\tx\n",            // a field short
                          "1\t1\t7\t10\tx\tx\tx\n",      // a field too many
                          "1\t1\t7\t-3\tx\tx\n",         // negative count
                          "1\t1\t7\t1e3\tx\tx\n",        // not an integer
                          "1\t2\t7\t1\tx\tx\n",          // top not 0/1
                          "1\t1\t7\t10\tx\tx",           // cut short
                          "1\t1\t7\t99999999999999999999\tx\tx\n",
                          "1\t1\t7\t18446744073709551615\tx\tx\n1\t1\t7\t1\tx\tx\n",
                          "1\t1\t7\t1\tx\\\tx\n"}) {
    SliceMerger merger;
    absl::Status status = merger.AddShardAnswer(0, "http://127.0.0.1:1", bad);
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_THAT(status.message(), HasSubstr("ClickHouse at http://127.0.0.1:1: slice answer"));
  }
  SliceMerger merger;
  EXPECT_TRUE(merger.AddShardAnswer(0, "a", "").ok());  // no samples: an empty answer
  EXPECT_EQ(std::move(merger).Finish(5).total, 0u);
}

// The total of all stacks must fit too (each stack's sum is at most it),
// and a refused answer leaves nothing behind.
TEST(SliceMerge, OverflowAcrossStacksRefusedWhole) {
  SliceMerger merger;
  ASSERT_TRUE(merger.AddShardAnswer(0, "a", "1\t1\t9\t5\tx\tx\n").ok());
  EXPECT_FALSE(merger
                   .AddShardAnswer(1, "b",
                                   "1\t1\t7\t18446744073709551610\tx\tx\n1\t1\t8\t1\tx\tx\n")
                   .ok());
  MergedSlice slice = std::move(merger).Finish(5);
  EXPECT_EQ(slice.total, 5u);
  ASSERT_EQ(slice.stacks.size(), 1u);
  EXPECT_EQ(slice.stacks[0].id, 9u);
}

// Answers over a megabyte are read in pieces cut at line ends: rows that
// straddle a cut count once, whole.
TEST(SliceMerge, LargeAnswerReadInPieces) {
  std::string answer;
  uint64_t total = 0;
  for (int i = 0; i < 100000; ++i) {
    answer += absl::StrCat(1000 + i, "\t1\t", 7 + i % 3, "\t", 1 + i % 5, "\tcomm\tcomm\n");
    total += 1 + i % 5;
  }
  ASSERT_GT(answer.size(), 2u << 20);
  SliceMerger merger;
  ASSERT_TRUE(merger.AddShardAnswer(0, "a", answer).ok());
  MergedSlice slice = std::move(merger).Finish(10);
  EXPECT_EQ(slice.total, total);
  ASSERT_EQ(slice.stacks.size(), 3u);
  EXPECT_EQ(slice.stacks[0].buckets.size() + slice.stacks[1].buckets.size() +
                slice.stacks[2].buckets.size(),
            100000u);
  // Cut short in its last piece: refused whole.
  SliceMerger cut;
  EXPECT_FALSE(cut.AddShardAnswer(0, "a", answer.substr(0, answer.size() - 3)).ok());
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
