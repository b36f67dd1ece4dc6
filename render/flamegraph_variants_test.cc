// flamegraph.pl's variants: differential graphs, --negate, --total, --factor,
// --reverse, --flamechart, --random, --bgcolors, the chain and dotnet
// palettes. Expected numbers are what flamegraph.pl (FlameGraph 41fee1f)
// printed for the same input and options.
#include <cstdio>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "render/flamegraph.h"
#include "render/flamegraph_test_util.h"

namespace profcpu::render {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing_util;  // NOLINT: test helpers

fold::FoldedProfile Differential(
    const std::vector<std::tuple<std::string, uint64_t, uint64_t>>& lines) {
  fold::FoldedProfile profile;
  profile.differential = true;
  for (const auto& [stack, before, after] : lines) {
    std::vector<absl::string_view> frames = absl::StrSplit(stack, ';');
    profile.AddStack(frames, after, before);
  }
  return profile;
}

TEST(FlameGraphVariantsTest, DifferentialColoursAndTitlesMatchFlamegraphPl) {
  const fold::FoldedProfile profile = Differential({{"main;a", 10, 20},
                                                    {"main;b", 30, 10},
                                                    {"main;c;d", 0, 5},
                                                    {"main", 5, 5},
                                                    {"main;e", 7, 0}});
  const std::vector<Frame> frames = ParseFrames(Render(profile));
  EXPECT_EQ(Only(frames, "all").title, "all (40 samples, 100%)");
  EXPECT_EQ(Only(frames, "all").fill, "rgb(255,255,255)");
  EXPECT_EQ(Only(frames, "main").title, "main (40 samples, 100.00%; 0.00%)");
  EXPECT_EQ(Only(frames, "a").title, "a (20 samples, 50.00%; +25.00%)");
  EXPECT_EQ(Only(frames, "a").fill, "rgb(255,105,105)");
  EXPECT_EQ(Only(frames, "b").title, "b (10 samples, 25.00%; -50.00%)");
  EXPECT_EQ(Only(frames, "b").fill, "rgb(0,0,255)");
  // The colour follows the frame's own change: c has none, d grew by 5.
  EXPECT_EQ(Only(frames, "c").fill, "rgb(255,255,255)");
  EXPECT_EQ(Only(frames, "d").title, "d (5 samples, 12.50%; +12.50%)");
  EXPECT_EQ(Only(frames, "d").fill, "rgb(255,157,157)");
  EXPECT_DOUBLE_EQ(Only(frames, "d").x, 1042.5);
  // A stack that vanished has no width to draw.
  EXPECT_TRUE(Named(frames, "e").empty());

  FlameGraphOptions negate;
  negate.negate = true;
  const std::vector<Frame> negated = ParseFrames(Render(profile, negate));
  EXPECT_EQ(Only(negated, "b").title, "b (10 samples, 25.00%; +50.00%)");
  EXPECT_EQ(Only(negated, "b").fill, "rgb(255,0,0)");
  EXPECT_EQ(Only(negated, "a").fill, "rgb(105,105,255)");
}

// "main;s 4 0" vanished, but its frame s lives on through "main;s;w": s
// keeps the change of its own count, as flamegraph.pl shows it.
TEST(FlameGraphVariantsTest, VanishedStackKeepsItsChangeOnAFrameStillDrawn) {
  const fold::FoldedProfile profile =
      Differential({{"main;s", 4, 0}, {"main;s;w", 1, 1}, {"main;x", 10, 10}});
  const std::vector<Frame> frames = ParseFrames(Render(profile));
  EXPECT_EQ(Only(frames, "s").title, "s (1 samples, 9.09%; -36.36%)");
  EXPECT_EQ(Only(frames, "s").fill, "rgb(0,0,255)");
  EXPECT_EQ(Only(frames, "w").title, "w (1 samples, 9.09%; 0.00%)");
  EXPECT_EQ(Only(frames, "x").fill, "rgb(255,255,255)");
  EXPECT_NEAR(Only(frames, "x").x, 117.27, 0.01);
}

TEST(FlameGraphVariantsTest, TotalAndFactorMatchFlamegraphPl) {
  FlameGraphOptions options;
  options.total = 8;
  options.factor = 2.5;
  const std::vector<Frame> frames = ParseFrames(Render(Profile({{"a;b", 3}, {"c", 1}}), options));
  EXPECT_EQ(Only(frames, "all").title, "all (20 samples, 100%)");
  EXPECT_DOUBLE_EQ(Only(frames, "all").width, 1180);
  // 7.5 and 2.5 print rounded half to even, as sprintf("%.0f") does.
  EXPECT_EQ(Only(frames, "a").title, "a (8 samples, 40.00%)");
  EXPECT_EQ(Only(frames, "c").title, "c (2 samples, 10.00%)");
  EXPECT_DOUBLE_EQ(Only(frames, "a").width, 442.5);
  EXPECT_DOUBLE_EQ(Only(frames, "c").x, 452.5);

  // A total below the profile's is ignored, and the render says so.
  FlameGraphOptions small;
  small.total = 2;
  std::string svg;
  FlameGraphReport report;
  ASSERT_TRUE(AppendFlameGraph(Profile({{"a", 3}}), small, &svg, &report).ok());
  EXPECT_TRUE(report.total_ignored);
  EXPECT_EQ(Only(ParseFrames(svg), "a").title, "a (3 samples, 100.00%)");
}

TEST(FlameGraphVariantsTest, DecimalCountsShowInTheirUnit) {
  fold::FoldedProfile profile = Profile({{"a", 15}, {"b", 5}});
  profile.count_unit = 0.1;  // read as "1.5" and "0.5"
  const std::vector<Frame> frames = ParseFrames(Render(profile));
  EXPECT_EQ(Only(frames, "all").title, "all (2 samples, 100%)");
  // flamegraph.pl rounds the count first and takes the share of that.
  EXPECT_EQ(Only(frames, "a").title, "a (2 samples, 100.00%)");
  EXPECT_EQ(Only(frames, "b").title, "b (0 samples, 0.00%)");
  EXPECT_DOUBLE_EQ(Only(frames, "a").width, 885);
}

TEST(FlameGraphVariantsTest, ReverseMergesByCallee) {
  FlameGraphOptions options;
  options.reverse = true;
  const std::vector<Frame> frames =
      ParseFrames(Render(Profile({{"m;x;lock", 3}, {"m;y;lock", 2}, {"m;y", 1}}), options));
  // "lock" becomes one root frame with both callers above it.
  const Frame lock = Only(frames, "lock");
  EXPECT_EQ(lock.title, "lock (5 samples, 83.33%)");
  EXPECT_EQ(Named(frames, "x").size(), 1u);
  EXPECT_EQ(Named(frames, "y").size(), 2u);  // under lock, and as a root of its own
  EXPECT_EQ(Named(frames, "m").size(), 3u);
}

TEST(FlameGraphVariantsTest, FlameChartKeepsInputOrder) {
  FlameGraphOptions options;
  options.flamechart = true;
  // Time order: a, then b, then a again; the two a's stay apart, and main's
  // own sample sits between its callees where it happened.
  const std::string svg =
      Render(Profile({{"main;a", 2}, {"main", 1}, {"main;b", 1}, {"main;a", 1}}), options);
  EXPECT_THAT(svg, HasSubstr(">Flame Chart</text>"));
  const std::vector<Frame> frames = ParseFrames(svg);
  const std::vector<Frame> as = Named(frames, "a");
  ASSERT_EQ(as.size(), 2u);
  EXPECT_DOUBLE_EQ(as[0].x, 10);
  EXPECT_DOUBLE_EQ(as[0].width, 472);
  const Frame b = Only(frames, "b");
  EXPECT_DOUBLE_EQ(b.x, 10 + 3 * 236);
  EXPECT_DOUBLE_EQ(as[1].x, 10 + 4 * 236);
  EXPECT_EQ(Only(frames, "main").title, "main (5 samples, 100.00%)");
}

TEST(FlameGraphVariantsTest, ChainPaletteMarksWakersAfterTheSeparator) {
  FlameGraphOptions options;
  options.palette = Palette::kChain;
  const std::vector<Frame> frames =
      ParseFrames(Render(Profile({{"a;b;--;c;d", 3}, {"a;e", 2}}), options));
  // Labels drop the "_[w]" mark; the colours keep it (flamegraph.pl's values).
  EXPECT_EQ(Only(frames, "c").fill, "rgb(107,217,217)");
  EXPECT_EQ(Only(frames, "d").fill, "rgb(99,210,210)");
  EXPECT_EQ(Only(frames, "e").fill, "rgb(87,87,211)");
  EXPECT_EQ(Only(frames, "--").fill, "rgb(160,160,160)");
  EXPECT_THAT(Render(Profile({{"a;b;--;c;d", 3}}), options), HasSubstr("#e0e0ff"));
}

TEST(FlameGraphVariantsTest, DotnetPaletteAndPrecompiledMark) {
  FlameGraphOptions options;
  options.palette = Palette::kDotnet;
  const std::vector<Frame> frames = ParseFrames(
      Render(Profile({{"dotnet;Program::Main_[p];instance void [App] App::Run_[j];write_[k]", 1}}),
             options));
  // Annotations pick the hue and are not shown.
  const Frame main = Only(frames, "Program::Main");
  EXPECT_EQ(main.label, "Program::Main");
  const Frame run = Only(frames, "instance void [App] App::Run");
  const Frame write = Only(frames, "write");
  auto channels = [](const std::string& fill) {
    int r, g, b;
    EXPECT_EQ(std::sscanf(fill.c_str(), "rgb(%d,%d,%d)", &r, &g, &b), 3) << fill;
    return std::vector<int>{r, g, b};
  };
  EXPECT_GT(channels(main.fill)[2], channels(main.fill)[0]);  // blue
  EXPECT_GT(channels(run.fill)[1], channels(run.fill)[0]);    // green
  EXPECT_EQ(channels(write.fill)[2], 0);                      // orange
}

TEST(FlameGraphVariantsTest, CoolSubtreeIsBlueWhateverThePalette) {
  const fold::FoldedProfile wall = Profile({{"app;[on-cpu];main;work;futex_wait", 3},
                                            {"app;[off-cpu];main;wait;futex_wait", 2}});
  FlameGraphOptions options;
  options.cool_subtree = "[off-cpu]";
  const std::vector<Frame> frames = ParseFrames(Render(wall, options));
  auto channels = [](const std::string& fill) {
    int r, g, b;
    EXPECT_EQ(std::sscanf(fill.c_str(), "rgb(%d,%d,%d)", &r, &g, &b), 3) << fill;
    return std::vector<int>{r, g, b};
  };
  auto blue = [&](const Frame& frame) {
    const std::vector<int> c = channels(frame.fill);
    return c[2] > c[0] && c[2] > c[1];
  };
  EXPECT_TRUE(blue(Only(frames, "[off-cpu]")));
  EXPECT_TRUE(blue(Only(frames, "wait")));
  EXPECT_FALSE(blue(Only(frames, "[on-cpu]")));
  EXPECT_FALSE(blue(Only(frames, "work")));
  EXPECT_FALSE(blue(Only(frames, "app")));
  // One name, two colours: by where the frame is, not what it is called.
  const std::vector<Frame> futex = Named(frames, "futex_wait");
  ASSERT_EQ(futex.size(), 2u);
  EXPECT_NE(blue(futex[0]), blue(futex[1]));
  // Two "main" frames, both drawn; only the one under [off-cpu] is blue.
  const std::vector<Frame> mains = Named(frames, "main");
  ASSERT_EQ(mains.size(), 2u);
  EXPECT_NE(blue(mains[0]), blue(mains[1]));

  // Without the option, or naming no frame of the graph: the palette alone.
  for (const std::string& name : {std::string(), std::string("[nowhere]")}) {
    options.cool_subtree = name;
    for (const Frame& frame : ParseFrames(Render(wall, options))) {
      EXPECT_FALSE(blue(frame)) << frame.title;
    }
  }
}

TEST(FlameGraphVariantsTest, RandomColoursDifferBackgroundsApply) {
  fold::FoldedProfile profile;
  for (int i = 0; i < 50; ++i) profile.AddStack({absl::StrCat("p", i), "same"}, 1);
  FlameGraphOptions options;
  options.random_colors = true;
  // 50 frames named alike: one colour each by name, many at random.
  std::set<std::string> fills;
  for (const Frame& frame : Named(ParseFrames(Render(profile, options)), "same")) {
    fills.insert(frame.fill);
  }
  EXPECT_GT(fills.size(), 10u);

  FlameGraphOptions flat;
  flat.bg_colors = "#102030";
  const std::string svg = Render(Profile({{"a", 1}}), flat);
  EXPECT_THAT(svg, HasSubstr("<stop stop-color=\"#102030\" offset=\"5%\"/>"));
  EXPECT_THAT(svg, Not(HasSubstr("#eeeeb0")));
  flat.bg_colors = "red\"/><script>";
  EXPECT_EQ(RenderFlameGraph(Profile({{"a", 1}}), flat).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FlameGraphVariantsTest, VariantsStayWellFormed) {
  FlameGraphOptions options;
  options.reverse = true;
  options.inverted = true;
  options.palette = Palette::kJava;
  options.notes = "a <note> & -- \"quoted\"";
  ExpectWellFormedXml(Render(Differential({{"x<y>;\"q\";&amp", 1, 4}, {"x<y>;z", 3, 1}}),
                             options));
}

}  // namespace
}  // namespace profcpu::render
