#include "render/run_graph.h"

#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

TEST(RunGraphTest, EachModeHasItsTitleAndColours) {
  const FlameGraphOptions cpu = DefaultGraphOptions("cpu", false, "pid 42");
  EXPECT_EQ(cpu.title, "CPU Flame Graph");
  EXPECT_EQ(cpu.subtitle, "pid 42");
  EXPECT_EQ(cpu.palette, Palette::kHot);
  EXPECT_TRUE(cpu.cool_subtree.empty());
  EXPECT_TRUE(cpu.count_name.empty());

  const FlameGraphOptions offcpu = DefaultGraphOptions("offcpu", true, "all processes");
  EXPECT_EQ(offcpu.title, "Off-CPU Time Flame Graph");
  EXPECT_EQ(offcpu.palette, Palette::kBlue);
  EXPECT_EQ(offcpu.count_name, "microseconds");

  const FlameGraphOptions wall = DefaultGraphOptions("wall", true, "");
  EXPECT_EQ(wall.palette, Palette::kHot);
  EXPECT_EQ(wall.cool_subtree, "[off-cpu]");
}

TEST(RunGraphTest, AnnotationPalettesFoldWithMarks) {
  fold::FoldOptions base;
  base.include_tid = true;
  const fold::FoldOptions hot = GraphFoldOptions(base, Palette::kHot);
  EXPECT_FALSE(hot.annotate_kernel || hot.annotate_jit || hot.annotate_precompiled);
  const fold::FoldOptions java = GraphFoldOptions(base, Palette::kJava);
  EXPECT_TRUE(java.annotate_kernel && java.annotate_jit);
  EXPECT_FALSE(java.annotate_precompiled);
  EXPECT_TRUE(java.include_tid);
  const fold::FoldOptions dotnet = GraphFoldOptions(base, Palette::kDotnet);
  EXPECT_TRUE(dotnet.annotate_kernel && dotnet.annotate_jit && dotnet.annotate_precompiled);
}

}  // namespace
}  // namespace profcpu::render
