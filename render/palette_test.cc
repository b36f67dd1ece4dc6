#include "render/palette.h"

#include <string>

#include "gtest/gtest.h"
#include "render/palette_classify.h"

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

// Multi-palettes pick a hue from the name and its annotation; expected values
// from flamegraph.pl --colors=THEME on the same names.
TEST(PaletteTest, MultiPalettesMatchFlamegraphPl) {
  EXPECT_EQ(Color(Palette::kJava, false, "org/foo/Bar:::baz"), "rgb(83,231,83)");
  EXPECT_EQ(Color(Palette::kJava, false, "Ljava/lang/Thread"), "rgb(90,237,90)");
  EXPECT_EQ(Color(Palette::kJava, false, ".run_[j]"), "rgb(75,223,75)");
  EXPECT_EQ(Color(Palette::kJava, false, "Interpreter_[i]"), "rgb(58,172,172)");
  EXPECT_EQ(Color(Palette::kJava, false, "JVM::call"), "rgb(193,193,56)");
  EXPECT_EQ(Color(Palette::kJava, false, "do_syscall_64_[k]"), "rgb(204,104,0)");
  EXPECT_EQ(Color(Palette::kJava, false, "java"), "rgb(209,63,63)");

  EXPECT_EQ(Color(Palette::kJs, false, "JS:*fib /app/x.js:1_[j]"), "rgb(64,213,64)");
  EXPECT_EQ(Color(Palette::kJs, false, "JS:~builtin_[j]"), "rgb(68,182,182)");
  EXPECT_EQ(Color(Palette::kJs, false, "v8::internal::Run"), "rgb(205,205,61)");
  EXPECT_EQ(Color(Palette::kJs, false, "/app/y.js"), "rgb(75,223,75)");
  EXPECT_EQ(Color(Palette::kJs, false, "Builtin:Foo"), "rgb(51,166,166)");
  EXPECT_EQ(Color(Palette::kJs, false, " "), "rgb(52,202,52)");
  EXPECT_EQ(Color(Palette::kJs, false, "sys_read_[k]"), "rgb(219,119,0)");
  EXPECT_EQ(Color(Palette::kJs, false, "write"), "rgb(225,87,87)");

  EXPECT_EQ(Color(Palette::kPerl, false, "Perl_pp_entersub"), "rgb(107,252,107)");
  EXPECT_EQ(Color(Palette::kPerl, false, "x.pl"), "rgb(68,216,68)");
  EXPECT_EQ(Color(Palette::kPerl, false, "main::foo"), "rgb(226,226,68)");
  EXPECT_EQ(Color(Palette::kPerl, false, "sys_x_[k]"), "rgb(201,101,0)");
  EXPECT_EQ(Color(Palette::kPerl, false, "libc"), "rgb(210,65,65)");

  EXPECT_EQ(Color(Palette::kWakeup, false, "libc"), "rgb(61,175,175)");
  EXPECT_EQ(Color(Palette::kChain, false, "c_[w]"), "rgb(107,217,217)");
  EXPECT_EQ(Color(Palette::kChain, false, "e"), "rgb(87,87,211)");
}

TEST(PaletteTest, DotnetTellsFrameKindsApart) {
  EXPECT_EQ(ClassifyDotnetFrame("do_syscall_64_[k]"), DotnetFrameKind::kKernel);
  EXPECT_EQ(ClassifyDotnetFrame("[kernel.kallsyms]"), DotnetFrameKind::kKernel);
  EXPECT_EQ(ClassifyDotnetFrame("instance void [App] App.Program::Run_[j]"),
            DotnetFrameKind::kJit);
  // CoreCLR's naming alone tells managed code, without annotations.
  EXPECT_EQ(ClassifyDotnetFrame("int32 [System.Private.CoreLib] System.String::GetHashCode"),
            DotnetFrameKind::kJit);
  EXPECT_EQ(ClassifyDotnetFrame("stub<1> AllocateTemporaryEntryPoints<PreStub>"),
            DotnetFrameKind::kJit);
  EXPECT_EQ(ClassifyDotnetFrame("[perf-42.map]"), DotnetFrameKind::kJit);
  // profcpu's own form: the assembly last.
  EXPECT_EQ(ClassifyDotnetFrame("System.Text.Json.Serialization.JsonConverter`1[System.__Canon]"
                                "::WriteCore [System.Text.Json]"),
            DotnetFrameKind::kJit);
  EXPECT_EQ(ClassifyDotnetFrame("App.Calc::Sum[OptimizedTier1] [App]"), DotnetFrameKind::kJit);
  EXPECT_EQ(ClassifyDotnetFrame("App::Run[PreJIT] [App]"), DotnetFrameKind::kPrecompiled);
  EXPECT_EQ(ClassifyDotnetFrame("ns::f [clone .cold]"), DotnetFrameKind::kNativeCpp);
  EXPECT_EQ(ClassifyDotnetFrame("System.String::Concat_[p]"), DotnetFrameKind::kPrecompiled);
  EXPECT_EQ(ClassifyDotnetFrame("App::Main()[PreJIT]"), DotnetFrameKind::kPrecompiled);
  EXPECT_EQ(ClassifyDotnetFrame("[System.Private.CoreLib.dll]"), DotnetFrameKind::kPrecompiled);
  EXPECT_EQ(ClassifyDotnetFrame("WKS::gc_heap::mark_object_simple"),
            DotnetFrameKind::kNativeCpp);
  EXPECT_EQ(ClassifyDotnetFrame("__memmove_avx_unaligned_erms"), DotnetFrameKind::kNative);
  EXPECT_EQ(ClassifyDotnetFrame("[libcoreclr.so]"), DotnetFrameKind::kNative);
  EXPECT_EQ(ClassifyDotnetFrame("dotnet"), DotnetFrameKind::kNative);

  // Four kinds, four distinct hues.
  auto hue = [](absl::string_view name) { return ResolvePalette(Palette::kDotnet, name); };
  EXPECT_EQ(hue("tick_[k]"), Palette::kOrange);
  EXPECT_EQ(hue("Foo_[j]"), Palette::kGreen);
  EXPECT_EQ(hue("Foo_[p]"), Palette::kBlue);
  EXPECT_EQ(hue("libc_start_main"), Palette::kRed);
}

TEST(PaletteTest, DifferenceColorMatchesFlamegraphPlScale) {
  std::string out;
  auto color = [](int64_t delta, uint64_t max, bool negate) {
    std::string text;
    AppendRgb(DifferenceColor(delta, max, negate), &text);
    return text;
  };
  EXPECT_EQ(color(0, 10, false), "rgb(255,255,255)");
  EXPECT_EQ(color(10, 10, false), "rgb(255,0,0)");
  EXPECT_EQ(color(5, 10, false), "rgb(255,105,105)");
  EXPECT_EQ(color(-5, 10, false), "rgb(105,105,255)");
  EXPECT_EQ(color(5, 10, true), "rgb(105,105,255)");
  EXPECT_EQ(color(-30, 10, false), "rgb(0,0,255)");  // beyond the scale: full colour
}

TEST(PaletteTest, SameNameSameColor) {
  for (bool by_hash : {false, true}) {
    EXPECT_EQ(FrameColor(Palette::kHot, by_hash, "do_syscall_64"),
              FrameColor(Palette::kHot, by_hash, std::string("do_syscall_") + "64"));
  }
}

TEST(PaletteTest, ParsesPaletteNames) {
  for (absl::string_view name :
       {"hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "dotnet", "red", "green",
        "blue", "aqua", "yellow", "purple", "orange"}) {
    absl::StatusOr<Palette> palette = ParsePalette(name);
    ASSERT_TRUE(palette.ok()) << name;
    EXPECT_EQ(PaletteName(*palette), name);
  }
  EXPECT_EQ(ParsePalette("jav").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePalette("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PaletteTest, BackgroundFollowsPalette) {
  EXPECT_EQ(BackgroundFor(Palette::kHot).bottom, "#eeeeb0");
  EXPECT_EQ(BackgroundFor(Palette::kMem).bottom, "#e0ffe0");
  EXPECT_EQ(BackgroundFor(Palette::kIo).bottom, "#e0e0ff");
  EXPECT_EQ(BackgroundFor(Palette::kRed).bottom, "#e8e8e8");
  EXPECT_EQ(BackgroundFor(Palette::kChain).bottom, "#e0e0ff");
  EXPECT_EQ(BackgroundFor(Palette::kDotnet).bottom, "#eeeeb0");
  EXPECT_EQ(ParseBackground("green")->top, "#eef2ee");
  EXPECT_EQ(ParseBackground("#123abc")->bottom, "#123abc");
  EXPECT_FALSE(ParseBackground("#12\"/><x").ok());
  EXPECT_FALSE(ParseBackground("pink").ok());
}

}  // namespace
}  // namespace profcpu::render
