#include "render/palette.h"

#include <string>

#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

std::string Color(Palette palette, bool by_hash, absl::string_view name) {
  std::string out;
  AppendRgb(FrameColor(palette, by_hash, name), &out);
  return out;
}

// Expected values are what flamegraph.pl (FlameGraph master, Perl 5.36)
// printed for these names with the same options.
TEST(PaletteTest, HotMatchesFlamegraphPlDefault) {
  EXPECT_EQ(Color(Palette::kHot, false, "foo"), "rgb(220,71,17)");
  EXPECT_EQ(Color(Palette::kHot, false, "main"), "rgb(243,179,42)");
  EXPECT_EQ(Color(Palette::kHot, false, "foo::bar"), "rgb(225,92,22)");
  EXPECT_EQ(Color(Palette::kHot, false, ""), "rgb(213,39,9)");  // the root
  EXPECT_EQ(Color(Palette::kHot, false, "caf\xC3\xA9"), "rgb(233,130,31)");  // code points
  EXPECT_EQ(Color(Palette::kHot, false, "libc.so`malloc"), "rgb(205,0,0)");
  EXPECT_EQ(Color(Palette::kHot, false, "java/lang/Thread.run"), "rgb(229,114,27)");
}

TEST(PaletteTest, HashModeMatchesFlamegraphPlHash) {
  EXPECT_EQ(Color(Palette::kHot, true, "main"), "rgb(247,83,46)");
  EXPECT_EQ(Color(Palette::kHot, true, "x"), "rgb(255,230,55)");
  EXPECT_EQ(Color(Palette::kHot, true, ""), "rgb(255,230,55)");
  EXPECT_EQ(Color(Palette::kHot, true, "caf\xC3\xA9"), "rgb(245,93,44)");
  EXPECT_EQ(Color(Palette::kHot, true, "libc.so`malloc"), "rgb(240,112,39)");
  EXPECT_EQ(Color(Palette::kHot, true, "foo"), "rgb(247,199,47)");
  EXPECT_EQ(Color(Palette::kHot, true, "java/lang/Thread.run"), "rgb(243,104,41)");
  EXPECT_EQ(Color(Palette::kMem, true, "java/lang/Thread.run"), "rgb(0,228,95)");
  EXPECT_EQ(Color(Palette::kMem, true, "main"), "rgb(0,232,76)");
}

TEST(PaletteTest, OtherPalettesMatchFlamegraphPl) {
  EXPECT_EQ(Color(Palette::kMem, false, "foo"), "rgb(0,205,65)");
  EXPECT_EQ(Color(Palette::kIo, false, "foo"), "rgb(98,98,207)");
  EXPECT_EQ(Color(Palette::kRed, false, "foo"), "rgb(217,74,74)");
  EXPECT_EQ(Color(Palette::kGreen, false, "foo"), "rgb(68,217,68)");
  EXPECT_EQ(Color(Palette::kBlue, false, "foo"), "rgb(98,98,220)");
  EXPECT_EQ(Color(Palette::kAqua, false, "foo"), "rgb(68,182,182)");
  EXPECT_EQ(Color(Palette::kYellow, false, "foo"), "rgb(192,192,56)");
  EXPECT_EQ(Color(Palette::kPurple, false, "foo"), "rgb(210,98,210)");
  EXPECT_EQ(Color(Palette::kOrange, false, "foo"), "rgb(210,110,0)");
  EXPECT_EQ(Color(Palette::kOrange, false, "main"), "rgb(240,140,0)");
}

TEST(PaletteTest, SameNameSameColor) {
  for (bool by_hash : {false, true}) {
    EXPECT_EQ(FrameColor(Palette::kHot, by_hash, "do_syscall_64"),
              FrameColor(Palette::kHot, by_hash, std::string("do_syscall_") + "64"));
  }
}

TEST(PaletteTest, ParsesPaletteNames) {
  for (absl::string_view name :
       {"hot", "mem", "io", "red", "green", "blue", "aqua", "yellow", "purple", "orange"}) {
    absl::StatusOr<Palette> palette = ParsePalette(name);
    ASSERT_TRUE(palette.ok()) << name;
    EXPECT_EQ(PaletteName(*palette), name);
  }
  EXPECT_EQ(ParsePalette("java").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePalette("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PaletteTest, BackgroundFollowsPalette) {
  EXPECT_EQ(BackgroundFor(Palette::kHot).bottom, "#eeeeb0");
  EXPECT_EQ(BackgroundFor(Palette::kMem).bottom, "#e0ffe0");
  EXPECT_EQ(BackgroundFor(Palette::kIo).bottom, "#e0e0ff");
  EXPECT_EQ(BackgroundFor(Palette::kRed).bottom, "#e8e8e8");
}

}  // namespace
}  // namespace profcpu::render
