#include "render/graph_overrides.h"

#include "gtest/gtest.h"
#include "render/run_graph.h"

namespace profcpu::render {
namespace {

TEST(GraphOverridesTest, OnlyTheFieldsGivenReplaceTheDefaults) {
  FlameGraphOptions graph = DefaultGraphOptions("offcpu", /*microseconds=*/true, "pid 42");
  const FlameGraphOptions defaults = graph;
  GraphOverrides overrides;
  overrides.title = "mine";
  overrides.min_width = GraphOverrides::MinWidth{0.5, true};
  overrides.inverted = true;
  ASSERT_TRUE(ApplyGraphOverrides(overrides, &graph).ok());
  EXPECT_EQ(graph.title, "mine");
  EXPECT_EQ(graph.min_width, 0.5);
  EXPECT_TRUE(graph.min_width_is_percent);
  EXPECT_TRUE(graph.inverted);
  EXPECT_EQ(graph.subtitle, defaults.subtitle);  // the run's own
  EXPECT_EQ(graph.palette, defaults.palette);
  EXPECT_EQ(graph.count_name, defaults.count_name);
}

TEST(GraphOverridesTest, NoneKeepsEverything) {
  FlameGraphOptions graph = DefaultGraphOptions("cpu", false, "target");
  const std::string title = graph.title;
  ASSERT_TRUE(ApplyGraphOverrides({}, &graph).ok());
  EXPECT_EQ(graph.title, title);
}

TEST(GraphOverridesTest, TheResultIsChecked) {
  FlameGraphOptions graph;
  GraphOverrides overrides;
  overrides.width = -5;
  EXPECT_TRUE(absl::IsInvalidArgument(ApplyGraphOverrides(overrides, &graph)));
}

}  // namespace
}  // namespace profcpu::render
