#include "render/frame_tree.h"

#include <cstdint>
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

using ::testing::ElementsAre;

fold::FoldedProfile Profile(const std::vector<std::pair<std::string, uint64_t>>& lines) {
  fold::FoldedProfile profile;
  for (const auto& [stack, count] : lines) {
    std::vector<absl::string_view> frames;
    if (!stack.empty()) frames = absl::StrSplit(stack, ';');
    profile.AddStack(frames, count);
  }
  return profile;
}

std::string NameOf(const FrameTree& tree, uint32_t id) {
  return id == 0 ? "all" : std::string(tree.name(tree.nodes()[id].name));
}

// "name@start+total" per node drawn, callees in braces.
std::string Dump(const FrameTree& tree, double min_total = 0) {
  std::string out;
  uint32_t previous_depth = 0;
  tree.ForEachAtLeast(min_total, [&](uint32_t id, uint32_t depth, uint64_t start) {
    if (id != 0) out += depth > previous_depth ? "{" : " ";
    for (; previous_depth > depth; --previous_depth) out.insert(out.size() - 1, "}");
    previous_depth = depth;
    absl::StrAppend(&out, NameOf(tree, id), "@", start, "+", tree.nodes()[id].total);
  });
  out.append(previous_depth, '}');
  return out;
}

std::vector<std::string> Children(const FrameTree& tree, uint32_t id) {
  std::vector<std::string> names;
  for (uint32_t c = tree.nodes()[id].first_child; c != FrameTree::kNone;
       c = tree.nodes()[c].next_sibling) {
    names.push_back(NameOf(tree, c));
  }
  return names;
}

TEST(FrameTreeTest, MergesSharedPrefixes) {
  const fold::FoldedProfile profile =
      Profile({{"a;b;c", 1}, {"a;b;d", 2}, {"a;e", 3}, {"x;b", 4}});
  const FrameTree tree = FrameTree::Build(profile);
  EXPECT_EQ(Dump(tree), "all@0+10{a@0+6{b@0+3{c@0+1 d@1+2} e@3+3} x@6+4{b@6+4}}");
  EXPECT_EQ(tree.nodes().size(), 8u);  // "b" under "x" is not the "b" under "a"
  EXPECT_EQ(tree.name_count(), 6u);   // but its name is interned once
}

TEST(FrameTreeTest, InputOrderDoesNotMatter) {
  const fold::FoldedProfile sorted =
      Profile({{"a;b;c", 1}, {"a;b;d", 2}, {"a;e", 3}, {"x;b", 4}});
  const fold::FoldedProfile shuffled =
      Profile({{"x;b", 4}, {"a;b;d", 2}, {"a;e", 3}, {"a;b;c", 1}, {"a;b;d", 5}});
  EXPECT_EQ(Dump(FrameTree::Build(shuffled)),
            "all@0+15{a@0+11{b@0+8{c@0+1 d@1+7} e@8+3} x@11+4{b@11+4}}");
  EXPECT_EQ(Dump(FrameTree::Build(sorted)),
            "all@0+10{a@0+6{b@0+3{c@0+1 d@1+2} e@3+3} x@6+4{b@6+4}}");
}

TEST(FrameTreeTest, ChildrenSortedAsFlamegraphPlSortsLines) {
  const fold::FoldedProfile profile = Profile(
      {{"m;zeta", 1}, {"m;Alpha", 1}, {"m;beta", 1}, {"m;foo;x", 1}, {"m;foo::bar;y", 1}});
  const FrameTree tree = FrameTree::Build(profile);
  // Byte order (upper case first); "foo::bar;..." sorts before "foo;..." as ':' < ';'.
  EXPECT_THAT(Children(tree, tree.root().first_child),
              ElementsAre("Alpha", "beta", "foo::bar", "foo", "zeta"));
}

TEST(FrameTreeTest, FrameNameLessComparesAsIfFollowedBySemicolon) {
  EXPECT_TRUE(FrameNameLess("a", "b"));
  EXPECT_FALSE(FrameNameLess("b", "a"));
  EXPECT_FALSE(FrameNameLess("a", "a"));
  EXPECT_TRUE(FrameNameLess("foo!", "foo"));   // '!' < ';'
  EXPECT_TRUE(FrameNameLess("foo", "foo_x"));  // ';' < '_'
  EXPECT_TRUE(FrameNameLess("", "a"));
  EXPECT_TRUE(FrameNameLess("foo", "foo;"));
}

TEST(FrameTreeTest, OwnSamplesSitLeftOfCallees) {
  // flamegraph.pl sorts "a;b 5" before "a;b;c 3", so b's own time comes first.
  const fold::FoldedProfile profile = Profile({{"a;b;c", 3}, {"a;b", 5}});
  const FrameTree tree = FrameTree::Build(profile);
  EXPECT_EQ(Dump(tree), "all@0+8{a@0+8{b@0+8{c@5+3}}}");
  EXPECT_EQ(tree.SelfCount(2), 5u);
}

TEST(FrameTreeTest, NarrowNodesSkippedWithTheirCallees) {
  const fold::FoldedProfile profile =
      Profile({{"a;x;y", 1}, {"a;b", 5}, {"a;c;d", 4}, {"e", 2}});
  const FrameTree tree = FrameTree::Build(profile);
  EXPECT_EQ(Dump(tree), "all@0+12{a@0+10{b@0+5 c@5+4{d@5+4} x@9+1{y@9+1}} e@10+2}");
  // Positions of the frames kept do not move when narrower ones are skipped.
  EXPECT_EQ(Dump(tree, 2), "all@0+12{a@0+10{b@0+5 c@5+4{d@5+4}} e@10+2}");
  EXPECT_EQ(Dump(tree, 5), "all@0+12{a@0+10{b@0+5}}");
  EXPECT_EQ(Dump(tree, 100), "all@0+12");
}

TEST(FrameTreeTest, ZeroCountsAndEmptyStacks) {
  const fold::FoldedProfile profile = Profile({{"a;b", 0}, {"", 2}, {"c", 1}});
  const FrameTree tree = FrameTree::Build(profile);
  EXPECT_EQ(Dump(tree), "all@0+3{c@2+1}");
  EXPECT_EQ(tree.SelfCount(0), 2u);

  const fold::FoldedProfile nothing;
  const FrameTree empty = FrameTree::Build(nothing);
  EXPECT_EQ(empty.nodes().size(), 1u);
  EXPECT_EQ(empty.root().total, 0u);
}

TEST(FrameTreeTest, CountsSaturateInsteadOfWrapping) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const fold::FoldedProfile profile = Profile({{"a", max}, {"b", max}});
  const FrameTree tree = FrameTree::Build(profile);
  EXPECT_EQ(tree.root().total, max);
  EXPECT_EQ(Dump(tree), absl::StrCat("all@0+", max, "{a@0+", max, " b@", max, "+", max, "}"));
}

TEST(FrameTreeTest, DeepStacksNeedNoRecursion) {
  fold::FoldedProfile profile;
  fold::FoldedStack stack;
  for (int i = 0; i < 200000; ++i) stack.frames.push_back(profile.InternName(absl::StrCat("f", i % 7)));
  stack.count = 3;
  profile.stacks.push_back(stack);
  stack.frames.back() = profile.InternName("leaf");
  profile.stacks.push_back(stack);
  const FrameTree tree = FrameTree::Build(profile);
  ASSERT_EQ(tree.nodes().size(), 200002u);
  EXPECT_EQ(tree.root().total, 6u);
  uint32_t max_depth = 0;
  size_t visited = 0;
  tree.ForEachAtLeast(0, [&](uint32_t, uint32_t depth, uint64_t start) {
    max_depth = std::max(max_depth, depth);
    if (depth == 200000) {
      EXPECT_TRUE(start == 0 || start == 3) << start;
    }
    ++visited;
  });
  EXPECT_EQ(max_depth, 200000u);
  EXPECT_EQ(visited, 200002u);
}

TEST(FrameTreeTest, FlameChartMergesOnlyNeighbours) {
  const fold::FoldedProfile profile = Profile({{"m;a", 2}, {"m;b", 1}, {"m;a", 1}, {"m;a;c", 1}});
  FrameTreeOptions options;
  options.flamechart = true;
  const FrameTree tree = FrameTree::Build(profile, options);
  // Input order, and the second "a" (which "c" extends) is not the first.
  EXPECT_EQ(Dump(tree), "all@0+5{m@0+5{a@0+2 b@2+1 a@3+2{c@4+1}}}");
  EXPECT_THAT(Children(tree, 1), ElementsAre("a", "b", "a"));
}

TEST(FrameTreeTest, DifferentialKeepsEachFramesOwnChange) {
  fold::FoldedProfile profile = Profile({{"m;a", 20}, {"m;b", 10}, {"m", 5}, {"m;e", 0}});
  profile.differential = true;
  const uint64_t before[] = {10, 30, 5, 7};
  for (size_t i = 0; i < profile.stacks.size(); ++i) profile.stacks[i].baseline = before[i];
  const FrameTree tree = FrameTree::Build(profile);
  ASSERT_TRUE(tree.differential());
  // "m;e 7 0" leaves e with no width, but with its change (flamegraph.pl's
  // frame of no width), for a later "m;e;f" to show.
  EXPECT_EQ(Dump(tree), "all@0+35{m@0+35{a@5+20 b@25+10 e@35+0}}");
  EXPECT_EQ(tree.delta(1), 0);    // m: "m 5 5"
  EXPECT_EQ(tree.delta(2), 10);   // a
  EXPECT_EQ(tree.delta(3), -20);  // b
  EXPECT_EQ(tree.delta(4), -7);   // e
  // The scale is the largest change of one line, drawn or not.
  EXPECT_EQ(tree.max_delta(), 20u);
  EXPECT_FALSE(FrameTree::Build(Profile({{"a", 1}})).differential());
}

// Build() partitions the stacks frame by frame; the tree is the one adding
// them one by one makes, and frames too narrow to draw keep their width but
// lose their callees.
TEST(FrameTreeTest, PartitionedBuildMatchesStacksAddedOneByOne) {
  fold::FoldedProfile profile;
  uint64_t state = 777;
  std::vector<std::string> frames;
  for (int i = 0; i < 2000; ++i) {
    frames.clear();
    const int depth = static_cast<int>(state % 12);  // empty stacks too
    for (int d = 0; d < depth; ++d) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      frames.push_back(absl::StrCat("f", (state >> 33) % (d < 2 ? 3 : 9)));
    }
    state = state * 6364136223846793005u + 1442695040888963407u;
    std::vector<absl::string_view> views(frames.begin(), frames.end());
    profile.AddStack(views, (state >> 40) % 7);  // zero counts too
  }
  FrameTree::Builder builder;
  for (const fold::FoldedStack& stack : profile.stacks) {
    builder.Add(profile.FrameNames(stack), stack.count);
  }
  const FrameTree added = std::move(builder).Finish();
  const FrameTree built = FrameTree::Build(profile);
  EXPECT_EQ(built.nodes().size(), added.nodes().size());
  EXPECT_EQ(Dump(built), Dump(added));
  for (double narrowest : {2.0, 10.0, 50.0, 400.0, 1e9}) {  // the last: wider than all
    FrameTreeOptions options;
    options.drop_callees_below = narrowest;
    const FrameTree pruned = FrameTree::Build(profile, options);
    EXPECT_EQ(Dump(pruned, narrowest), Dump(added, narrowest)) << narrowest;
    EXPECT_LT(pruned.nodes().size(), added.nodes().size()) << narrowest;
    for (size_t id = 1; id < pruned.nodes().size(); ++id) {
      const FrameTree::Node& node = pruned.nodes()[id];
      EXPECT_LT(node.parent, id);
      if (static_cast<double>(node.total) < narrowest) {
        EXPECT_EQ(node.first_child, FrameTree::kNone);
      }
    }
  }
}

TEST(FrameTreeTest, BuilderTakesStacksOneByOne) {
  FrameTree::Builder builder;
  std::vector<absl::string_view> frames;
  {
    std::string scratch = "a;b";  // views need live only for the call
    frames = absl::StrSplit(scratch, ';');
    builder.Add(frames, 2);
  }
  // Decimals met later: what was added so far is rescaled.
  builder.ScaleCounts(10);
  builder.MakeDifferential();
  frames = {"a", "c"};
  builder.Add(frames, 15, -5);
  const FrameTree tree = std::move(builder).Finish();
  EXPECT_EQ(Dump(tree), "all@0+35{a@0+35{b@0+20 c@20+15}}");
  EXPECT_EQ(tree.delta(3), -5);
  EXPECT_EQ(tree.delta(2), 0);
}

}  // namespace
}  // namespace profcpu::render
