#include "render/flamegraph.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "render/flamegraph_test_util.h"

namespace profcpu::render {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing_util;  // NOLINT: test helpers

TEST(FlameGraphTest, WidthsProportionalToCounts) {
  const std::string svg = Render(Profile({{"main;a", 30}, {"main;b", 10}, {"main;c;d", 60}}));
  const std::vector<Frame> frames = ParseFrames(svg);
  ASSERT_EQ(frames.size(), 6u);
  const Frame all = Only(frames, "all");
  EXPECT_EQ(all.x, 10);
  EXPECT_EQ(all.width, 1180);
  EXPECT_EQ(Only(frames, "main").width, 1180);
  EXPECT_NEAR(Only(frames, "a").width, 1180 * 0.3, 0.01);
  EXPECT_NEAR(Only(frames, "b").width, 1180 * 0.1, 0.01);
  EXPECT_NEAR(Only(frames, "c").width, 1180 * 0.6, 0.01);
  EXPECT_NEAR(Only(frames, "d").width, 1180 * 0.6, 0.01);
  // Siblings in name order, side by side; callees stacked one level up.
  EXPECT_NEAR(Only(frames, "b").x, Only(frames, "a").x + Only(frames, "a").width, 0.01);
  EXPECT_NEAR(Only(frames, "c").x, Only(frames, "b").x + Only(frames, "b").width, 0.01);
  EXPECT_EQ(Only(frames, "d").x, Only(frames, "c").x);
  EXPECT_EQ(Only(frames, "main").y, all.y - 16);
  EXPECT_EQ(Only(frames, "d").y, all.y - 48);
  ExpectWellFormedXml(svg);
}

TEST(FlameGraphTest, MergesSharedPrefixes) {
  const std::vector<Frame> frames =
      ParseFrames(Render(Profile({{"p;q;r", 1}, {"p;t", 1}, {"p;q;s", 2}})));
  EXPECT_EQ(frames.size(), 6u);
  EXPECT_EQ(Only(frames, "p").title, "p (4 samples, 100.00%)");
  EXPECT_EQ(Only(frames, "q").title, "q (3 samples, 75.00%)");
  EXPECT_EQ(Only(frames, "r").title, "r (1 samples, 25.00%)");
  EXPECT_EQ(Only(frames, "s").title, "s (2 samples, 50.00%)");
}

TEST(FlameGraphTest, HoverTitleFormat) {
  FlameGraphOptions options;
  options.count_name = "bytes";
  options.min_width = 0;  // keep "cold", far below a pixel
  const std::vector<Frame> frames = ParseFrames(
      Render(Profile({{"hot", 1234567}, {"cold", 1}, {"warm", 2469133}}), options));
  EXPECT_EQ(Only(frames, "all").title, "all (3,703,701 bytes, 100%)");
  EXPECT_EQ(Only(frames, "hot").title, "hot (1,234,567 bytes, 33.33%)");
  EXPECT_EQ(Only(frames, "warm").title, "warm (2,469,133 bytes, 66.67%)");
  EXPECT_EQ(Only(frames, "cold").title, "cold (1 bytes, 0.00%)");

  // Annotations added by stackcollapse are dropped from what is shown.
  const std::vector<Frame> annotated =
      ParseFrames(Render(Profile({{"do_syscall_64_[k]", 1}, {"Foo.bar_[j]", 2}})));
  EXPECT_EQ(Only(annotated, "do_syscall_64").title, "do_syscall_64 (1 samples, 33.33%)");
  EXPECT_EQ(Only(annotated, "Foo.bar").label, "Foo.bar");
}

// A narrow .NET frame shows its type and method ("JsonConverter`1::
// WriteCore"), not the start of its namespace; the title keeps the full name.
TEST(FlameGraphTest, NarrowDotnetFramesShowTheMethod) {
  const std::string name =
      "System.Text.Json.Serialization.JsonConverter`1[System.__Canon]::WriteCore"
      "[OptimizedTier1] [System.Text.Json]_[j]";
  const std::string shown =
      "System.Text.Json.Serialization.JsonConverter`1[System.__Canon]::WriteCore"
      "[OptimizedTier1] [System.Text.Json]";
  // 1180 px for 100 samples: 20 samples are 236 px, room for 33 characters
  // (12 px font, 0.59 glyph width); 10 samples, 16.
  const std::vector<Frame> frames =
      ParseFrames(Render(Profile({{"main;" + name, 20}, {"main;other", 70}, {"x;" + name, 10}})));
  std::vector<std::string> labels;
  for (const Frame& frame : frames) {
    if (absl::StartsWith(frame.title, shown)) labels.push_back(frame.label);
  }
  EXPECT_THAT(labels, ::testing::UnorderedElementsAre("JsonConverter`1::WriteCore",
                                                      "JsonConverter`.."));
}

TEST(FlameGraphTest, HostileNamesAreEscaped) {
  const std::vector<std::string> names = {
      "<script>alert(1)</script>", "a&b\"c'd", "\x01", "\xff\xfe", "]]>",
      "</title><script>alert(2)</script>", "<![CDATA[x]]>", "&lt;", "<!--", "-->",
      std::string("nul\0byte", 8), "\xED\xA0\x80surrogate", "x\" onload=\"alert(3)"};
  fold::FoldedProfile profile;
  for (const std::string& name : names) profile.AddStack({"comm", name}, 5);
  profile.AddStack({"comm", "tail"}, 5);
  FlameGraphOptions options;
  options.width = 20000;  // room for every label in full
  options.title = "<b>title</b>";
  options.subtitle = "sub&title\x02";
  options.notes = "--> <script>alert(4)</script> <!--";
  options.name_type = "\"Func\":";
  options.count_name = "<samples>";
  const std::string svg = Render(profile, options);
  ExpectWellFormedXml(svg);

  // One script element only (ours), and no element any name could open.
  size_t scripts = 0;
  for (size_t pos = svg.find("<script"); pos != std::string::npos;
       pos = svg.find("<script", pos + 1)) {
    ++scripts;
  }
  EXPECT_EQ(scripts, 1u);
  EXPECT_THAT(svg, Not(HasSubstr("alert(1)</script>")));
  EXPECT_THAT(svg, Not(HasSubstr("<b>")));
  EXPECT_THAT(svg, HasSubstr("&lt;b&gt;title&lt;/b&gt;"));

  const std::vector<Frame> frames = ParseFrames(svg);
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_EQ(Only(frames, "<script>alert(1)</script>").label, "<script>alert(1)</script>");
  EXPECT_EQ(Only(frames, "a&b\"c'd").label, "a&b\"c'd");
  EXPECT_EQ(Only(frames, "]]>").label, "]]>");
  EXPECT_EQ(Only(frames, replacement).label, replacement);  // "\x01"
  EXPECT_EQ(Only(frames, replacement + replacement).label, replacement + replacement);
  EXPECT_EQ(Only(frames, "nul" + replacement + "byte").title,
            "nul" + replacement + "byte (5 <samples>, 7.14%)");
}

TEST(FlameGraphTest, ColorsStableAcrossRenders) {
  const fold::FoldedProfile profile =
      Profile({{"main;foo", 3}, {"main;bar;baz", 2}, {"main;-;kernel", 1}});
  const std::string first = Render(profile);
  fold::FoldedProfile reversed = profile;
  std::reverse(reversed.stacks.begin(), reversed.stacks.end());
  EXPECT_EQ(Render(reversed), first);
  EXPECT_EQ(Render(profile), first);

  const std::vector<Frame> frames = ParseFrames(first);
  EXPECT_EQ(Only(frames, "foo").fill, "rgb(220,71,17)");  // as flamegraph.pl colours it
  EXPECT_EQ(Only(frames, "main").fill, "rgb(243,179,42)");
  EXPECT_EQ(Only(frames, "-").fill, "rgb(200,200,200)");  // separator frames are grey
}

TEST(FlameGraphTest, MinWidthDropsNarrowFrames) {
  // At the default 1200 px, one sample in 100,000 is 0.0118 px wide.
  const fold::FoldedProfile profile =
      Profile({{"main;wide", 94'999}, {"main;narrow;child", 1}, {"main;five", 5'000}});
  const std::vector<Frame> by_default = ParseFrames(Render(profile));
  EXPECT_TRUE(Named(by_default, "narrow").empty());
  EXPECT_TRUE(Named(by_default, "child").empty());
  // Its time stays in the parent.
  EXPECT_EQ(Only(by_default, "main").title, "main (100,000 samples, 100.00%)");
  EXPECT_EQ(Only(by_default, "five").title, "five (5,000 samples, 5.00%)");

  FlameGraphOptions keep_all;
  keep_all.min_width = 0;
  const std::vector<Frame> all = ParseFrames(Render(profile, keep_all));
  EXPECT_EQ(Named(all, "narrow").size(), 1u);
  EXPECT_EQ(Named(all, "child").size(), 1u);

  FlameGraphOptions percent;
  percent.min_width = 10;
  percent.min_width_is_percent = true;
  const std::vector<Frame> wide_only = ParseFrames(Render(profile, percent));
  EXPECT_TRUE(Named(wide_only, "five").empty());
  EXPECT_EQ(Named(wide_only, "wide").size(), 1u);
}

TEST(FlameGraphTest, DroppedFramesShrinkTheImage) {
  const fold::FoldedProfile profile = Profile({{"a", 100'000}, {"b;c;d;e", 1}});
  const std::string svg = Render(profile);
  // Two levels drawn (all, a): 2 * 16 + 36 + 34.
  EXPECT_THAT(svg, HasSubstr("<svg version=\"1.1\" width=\"1200\" height=\"102\""));
}

TEST(FlameGraphTest, TitleWidthAndOtherOptions) {
  FlameGraphOptions options;
  options.title = "CPU of <pod>";
  options.subtitle = "30 s at 99 Hz";
  options.width = 800;
  options.frame_height = 20;
  options.font_type = "DejaVu Sans, sans-serif";
  const std::string svg = Render(Profile({{"main;work", 3}, {"main", 1}}), options);
  ExpectWellFormedXml(svg);
  EXPECT_THAT(svg, HasSubstr("width=\"800\""));
  EXPECT_THAT(svg, HasSubstr(">CPU of &lt;pod&gt;</text>"));
  EXPECT_THAT(svg, HasSubstr("<text id=\"subtitle\" x=\"400\" y=\"48\">30 s at 99 Hz</text>"));
  EXPECT_THAT(svg, HasSubstr("font-family:DejaVu Sans, sans-serif;"));
  const std::vector<Frame> frames = ParseFrames(svg);
  EXPECT_EQ(Only(frames, "all").width, 780);
  EXPECT_NEAR(Only(frames, "work").width, 780 * 0.75, 0.01);
  EXPECT_NEAR(Only(frames, "work").x, 10 + 780 * 0.25, 0.01);  // after main's own time
  EXPECT_EQ(Only(frames, "main").y, Only(frames, "all").y - 20);

  EXPECT_THAT(Render(Profile({{"a", 1}})), HasSubstr(">Flame Graph</text>"));
}

TEST(FlameGraphTest, InvertedHangsFromTheTop) {
  FlameGraphOptions options;
  options.inverted = true;
  const std::string svg = Render(Profile({{"main;work", 3}}), options);
  EXPECT_THAT(svg, HasSubstr(">Icicle Graph</text>"));
  EXPECT_THAT(svg, HasSubstr("data-inverted=\"1\""));
  const std::vector<Frame> frames = ParseFrames(svg);
  EXPECT_EQ(Only(frames, "all").y, 36);
  EXPECT_EQ(Only(frames, "main").y, 52);
  EXPECT_EQ(Only(frames, "work").y, 68);
}

TEST(FlameGraphTest, LabelsCutToFit) {
  // 1180 px: a 10% frame is 118 px, room for 16 characters of 7.08 px.
  const std::string long_name = "abcdefghijklmnopqrstuvwxyz";
  const std::vector<Frame> frames = ParseFrames(Render(Profile(
      {{long_name, 10}, {"short", 10}, {"tiny", 1}, {"\xC3\xA9\xC3\xA9\xC3\xA9" + long_name, 10},
       {"rest", 69}})));
  EXPECT_EQ(Only(frames, long_name).label, "abcdefghijklmn..");
  EXPECT_EQ(Only(frames, "short").label, "short");
  EXPECT_EQ(Only(frames, "tiny").label, "");  // 11.8 px: room for 1.67 characters
  // Cut by code points, never inside a UTF-8 sequence.
  EXPECT_EQ(Only(frames, "\xC3\xA9\xC3\xA9\xC3\xA9" + long_name).label,
            "\xC3\xA9\xC3\xA9\xC3\xA9" "abcdefghijk..");
  EXPECT_EQ(Only(frames, "all").label, "all");
}

TEST(FlameGraphTest, EmptyProfileSaysNoSamples) {
  const std::string svg = Render(fold::FoldedProfile{});
  ExpectWellFormedXml(svg);
  EXPECT_THAT(svg, HasSubstr(">No samples</text>"));
  EXPECT_TRUE(ParseFrames(svg).empty());

  // Stacks that all count zero are no samples either.
  FlameGraphOptions options;
  options.count_name = "bytes";
  const std::string zero = Render(Profile({{"a;b", 0}}), options);
  ExpectWellFormedXml(zero);
  EXPECT_THAT(zero, HasSubstr(">No bytes</text>"));
}

TEST(FlameGraphTest, ControlsAndScriptPresent) {
  const std::string svg = Render(Profile({{"a", 1}}));
  for (absl::string_view id : {"details", "unzoom", "search", "ignorecase", "matched", "title"}) {
    EXPECT_THAT(svg, HasSubstr(absl::StrCat("<text id=\"", id, "\"")));
  }
  EXPECT_THAT(svg, HasSubstr(">Reset Zoom</text>"));
  EXPECT_THAT(svg, HasSubstr(">Search</text>"));
  EXPECT_THAT(svg, HasSubstr("<linearGradient id=\"background\""));
  EXPECT_THAT(svg, HasSubstr("<script type=\"text/ecmascript\"><![CDATA["));
  EXPECT_THAT(svg, HasSubstr("data-name-type=\"Function:\""));
  EXPECT_THAT(svg, HasSubstr("data-count-name=\"samples\""));
}

TEST(FlameGraphTest, DeepStacksRender) {
  fold::FoldedProfile profile;
  fold::FoldedStack stack;
  for (int i = 0; i < 20000; ++i) stack.frames.push_back(profile.InternName(absl::StrCat("f", i)));
  stack.count = 1;
  profile.stacks.push_back(stack);
  const std::vector<Frame> frames = ParseFrames(Render(profile));
  EXPECT_EQ(frames.size(), 20001u);
}

TEST(FlameGraphTest, AppendsToExistingBuffer) {
  std::string out = "prefix";
  ASSERT_TRUE(AppendFlameGraph(Profile({{"a", 1}}), {}, &out).ok());
  EXPECT_TRUE(absl::StartsWith(out, "prefix<?xml"));
  EXPECT_TRUE(absl::EndsWith(out, "</svg>\n"));
}

TEST(FlameGraphTest, RejectsInvalidOptions) {
  const fold::FoldedProfile profile = Profile({{"a", 1}});
  const auto code = [&](auto change) {
    FlameGraphOptions options;
    change(options);
    return RenderFlameGraph(profile, options).status().code();
  };
  EXPECT_EQ(code([](FlameGraphOptions& o) { o.width = 0; }), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FlameGraphOptions& o) { o.frame_height = -1; }),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FlameGraphOptions& o) { o.font_size = 0; }),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FlameGraphOptions& o) { o.min_width = -1; }),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FlameGraphOptions& o) {
              o.min_width = 101;
              o.min_width_is_percent = true;
            }),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FlameGraphOptions& o) { o.font_type = "x; } svg { display:none"; }),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FlameGraphOptions& o) { o.search_color = "red; } *{"; }),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FlameGraphOptions& o) { o.width = 640; }), absl::StatusCode::kOk);
}

}  // namespace
}  // namespace profcpu::render

namespace profcpu::render {
namespace {

// The graph's tree drops the callees of frames too narrow to draw; the SVG
// is the one the whole tree gives, at every -minwidth.
TEST(FlameGraphTest, DroppingUndrawnCalleesChangesNothingDrawn) {
  fold::FoldedProfile profile;
  uint64_t state = 12345;
  std::vector<std::string> frames;
  for (int i = 0; i < 3000; ++i) {
    frames = {"comm"};
    const int depth = 2 + static_cast<int>(state % 9);
    for (int d = 0; d < depth; ++d) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      frames.push_back(absl::StrCat("f", (state >> 33) % (d < 2 ? 3 : 12)));
    }
    std::vector<absl::string_view> views(frames.begin(), frames.end());
    profile.AddStack(views, 1 + (state >> 40) % 20);
  }
  const std::pair<double, bool> widths[] = {{0.1, false}, {2, false}, {0.5, true}, {0, false}};
  for (const auto& [min_width, percent] : widths) {
    FlameGraphOptions options;
    options.min_width = min_width;
    options.min_width_is_percent = percent;
    const FrameTree whole = FrameTree::Build(profile);
    const FrameTree drawn = BuildFlameGraphTree(profile, options);
    std::string from_whole, from_drawn;
    ASSERT_TRUE(AppendFlameGraph(whole, options, "samples", 1, &from_whole).ok());
    ASSERT_TRUE(AppendFlameGraph(drawn, options, "samples", 1, &from_drawn).ok());
    EXPECT_EQ(from_drawn, from_whole) << "-minwidth " << min_width;
    if (min_width == 2) {
      EXPECT_LT(drawn.nodes().size(), whole.nodes().size());  // some were dropped
    }
  }
}

}  // namespace
}  // namespace profcpu::render
