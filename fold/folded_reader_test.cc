#include "fold/folded_reader.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "fold/folded_diff.h"
#include "fold/folded_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using ::testing::ElementsAre;

std::string JoinedFrames(const FoldedProfile& profile, const FoldedStack& stack) {
  return absl::StrJoin(profile.FrameNames(stack), "|");
}

TEST(FoldedReaderTest, ParsesLikeFlamegraphPl) {
  FoldedLine line;
  ASSERT_TRUE(ParseFoldedLine("main;work 12", &line));
  EXPECT_EQ(line.stack, "main;work");
  EXPECT_EQ(line.count.digits, 12u);
  EXPECT_FALSE(line.differential);

  // The count follows the last whitespace; one whitespace byte is dropped.
  ASSERT_TRUE(ParseFoldedLine("a b;c  7", &line));
  EXPECT_EQ(line.stack, "a b;c ");
  ASSERT_TRUE(ParseFoldedLine("a\t3", &line));
  EXPECT_EQ(line.stack, "a");

  // Two counts: before, then after.
  ASSERT_TRUE(ParseFoldedLine("a;b 3 5", &line));
  EXPECT_TRUE(line.differential);
  EXPECT_EQ(line.stack, "a;b");
  EXPECT_EQ(line.baseline.digits, 3u);
  EXPECT_EQ(line.count.digits, 5u);

  // Decimals, as /\d+(?:\.\d*)?/ allows.
  ASSERT_TRUE(ParseFoldedLine("a 1.25", &line));
  EXPECT_EQ(line.count.digits, 125u);
  EXPECT_EQ(line.count.decimals, 2);
  ASSERT_TRUE(ParseFoldedLine("a 5.", &line));
  EXPECT_EQ(line.count.digits, 5u);
  EXPECT_EQ(line.count.decimals, 0);

  // A stack may be empty; the count alone is not a line.
  ASSERT_TRUE(ParseFoldedLine(" 4", &line));
  EXPECT_EQ(line.stack, "");
  EXPECT_FALSE(ParseFoldedLine("4", &line));
  EXPECT_FALSE(ParseFoldedLine("a;b", &line));
  EXPECT_FALSE(ParseFoldedLine("a;b 1e5", &line));
  EXPECT_FALSE(ParseFoldedLine("a;b -1", &line));
  EXPECT_FALSE(ParseFoldedLine("a;b .5", &line));
  EXPECT_FALSE(ParseFoldedLine("", &line));
  // CRLF files are read too (flamegraph.pl would ignore every line).
  ASSERT_TRUE(ParseFoldedLine("a 2\r", &line));
  EXPECT_EQ(line.count.digits, 2u);
}

TEST(FoldedReaderTest, HugeCountsSaturate) {
  FoldedLine line;
  ASSERT_TRUE(ParseFoldedLine("a 99999999999999999999999", &line));
  EXPECT_EQ(line.count.digits, UINT64_MAX);
  EXPECT_EQ(ScaleCount({UINT64_MAX / 2, 0}, 3), UINT64_MAX);
  EXPECT_EQ(ScaleCount({15, 1}, 3), 1500u);
}

TEST(FoldedReaderTest, SplitsFramesAsPerlSplit) {
  std::vector<absl::string_view> frames;
  SplitFoldedFrames("a;;b", &frames);
  EXPECT_THAT(frames, ElementsAre("a", "", "b"));
  SplitFoldedFrames(";a;b;;", &frames);
  EXPECT_THAT(frames, ElementsAre("", "a", "b"));
  SplitFoldedFrames(";;", &frames);
  EXPECT_TRUE(frames.empty());
  SplitFoldedFrames("", &frames);
  EXPECT_TRUE(frames.empty());
}

TEST(FoldedReaderTest, ReadsAProfile) {
  FoldedReadStats stats;
  const FoldedProfile profile =
      ParseFoldedText("main;a 3\nnot a stack\nmain;b 1.5\n\nmain;a 2\n", &stats);
  EXPECT_EQ(stats.lines, 5u);
  EXPECT_EQ(stats.ignored_lines, 2u);
  ASSERT_EQ(profile.stacks.size(), 3u);
  EXPECT_FALSE(profile.differential);
  EXPECT_DOUBLE_EQ(profile.count_unit, 0.1);
  EXPECT_EQ(JoinedFrames(profile, profile.stacks[0]), "main|a");
  EXPECT_EQ(profile.stacks[0].count, 30u);
  EXPECT_EQ(profile.stacks[1].count, 15u);
  // Written back in the same unit.
  EXPECT_EQ(FormatFolded(profile), "main;a 3\nmain;b 1.5\nmain;a 2\n");
}

TEST(FoldedReaderTest, ReadsADifferentialProfile) {
  const FoldedProfile profile = ParseFoldedText("a;b 3 5\na;c 4\n");
  ASSERT_TRUE(profile.differential);
  EXPECT_EQ(profile.stacks[0].baseline, 3u);
  EXPECT_EQ(profile.stacks[0].count, 5u);
  // A one-count line among two-count ones is taken as unchanged.
  EXPECT_EQ(profile.stacks[1].baseline, 4u);
  EXPECT_EQ(FormatFolded(profile), "a;b 3 5\na;c 4 4\n");
}

TEST(FoldedDiffTest, PairsStacksAsDifffoldedPl) {
  const FoldedProfile before = ParseFoldedText("m;a 10\nm;b 30\nm;e 7\nm;a 1\n");
  const FoldedProfile after = ParseFoldedText("m;b 10\nm;a 20\nm;c;d 5\n");
  EXPECT_EQ(FormatFolded(DiffFolded(before, after)),
            "m;a 11 20\nm;b 30 10\nm;c;d 0 5\nm;e 7 0\n");

  // -n: int(count * 35 / 48).
  FoldedDiffOptions normalize;
  normalize.normalize = true;
  EXPECT_EQ(FormatFolded(DiffFolded(before, after, normalize)),
            "m;a 8 20\nm;b 21 10\nm;c;d 0 5\nm;e 5 0\n");
}

TEST(FoldedDiffTest, StripsHexAndKeepsTheFinerUnit) {
  const FoldedProfile before = ParseFoldedText("m;[lib.so <0x7f00ab>] 2\n");
  const FoldedProfile after = ParseFoldedText("m;[lib.so <0x7f11cd>] 1.5\n");
  FoldedDiffOptions strip;
  strip.strip_hex = true;
  EXPECT_EQ(FormatFolded(DiffFolded(before, after, strip)), "m;[lib.so <0x...>] 2 1.5\n");
  EXPECT_EQ(FormatFolded(DiffFolded(before, after)),
            "m;[lib.so <0x7f00ab>] 2 0\nm;[lib.so <0x7f11cd>] 0 1.5\n");
}

}  // namespace
}  // namespace profcpu::fold
