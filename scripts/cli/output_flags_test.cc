#include "scripts/cli/output_flags.h"

#include "gtest/gtest.h"

namespace profcpu::cli {
namespace {

FlagSet PostprocessFlags() {
  FlagSet flags("postprocess", "profcpu postprocess", "test");
  AddRunOutputFlags(&flags);
  AddFilterFlags(&flags);
  return flags;
}

// What postprocess reads: the outputs' options and the filters.
struct Outputs {
  render::RunOutputOptions options;
  fold::ProfileFilter filter;
};

absl::Status Read(const std::vector<std::string>& args, Outputs* outputs) {
  FlagSet flags = PostprocessFlags();
  absl::Status parsed = flags.Parse(args);
  if (!parsed.ok()) return parsed;
  absl::Status read = ReadRunOutputFlags(flags, &outputs->options);
  return read.ok() ? ReadFilterFlags(flags, &outputs->filter) : read;
}

TEST(OutputFlagsTest, FormatsThreadsAndFilters) {
  Outputs outputs;
  ASSERT_TRUE(Read({"-format", "pprof, svg,perfview", "-threads", "-pid", "12,13", "-comm",
                    "dotnet,.NET TP Worker", "-from", "1.5", "-to", "3", "-no-idle"},
                   &outputs)
                  .ok());
  EXPECT_TRUE(outputs.options.pprof);
  EXPECT_TRUE(outputs.options.perfview);
  EXPECT_TRUE(outputs.options.html);  // written unless turned off
  EXPECT_TRUE(outputs.options.threads);
  EXPECT_EQ(outputs.filter.pids, (std::vector<uint32_t>{12, 13}));
  EXPECT_EQ(outputs.filter.comms, (std::vector<std::string>{"dotnet", ".NET TP Worker"}));
  EXPECT_DOUBLE_EQ(*outputs.filter.from_s, 1.5);
  EXPECT_DOUBLE_EQ(*outputs.filter.to_s, 3);
  EXPECT_TRUE(outputs.filter.no_idle);
  EXPECT_FALSE(outputs.filter.empty());
}

TEST(OutputFlagsTest, NoHtmlSkipsThePage) {
  Outputs outputs;
  ASSERT_TRUE(Read({"-format", "pprof,no-html"}, &outputs).ok());
  EXPECT_TRUE(outputs.options.pprof);
  EXPECT_FALSE(outputs.options.html);
}

TEST(OutputFlagsTest, BadValuesNameTheFlag) {
  Outputs outputs;
  absl::Status format = Read({"-format", "speedscope"}, &outputs);
  EXPECT_TRUE(absl::IsInvalidArgument(format));
  EXPECT_NE(format.message().find("unknown -format 'speedscope'"), absl::string_view::npos);
  absl::Status ids = Read({"-tid", "12;13"}, &outputs);
  EXPECT_NE(ids.message().find("-tid takes ids separated by commas"), absl::string_view::npos);
  absl::Status range = Read({"-from", "5", "-to", "2"}, &outputs);
  EXPECT_NE(range.message().find("-to 2 must be after -from 5"), absl::string_view::npos);
  // Graph flags are checked when read, not after a 30 s profile.
  EXPECT_FALSE(Read({"-width", "wide"}, &outputs).ok());
}

TEST(OutputFlagsTest, GraphFlagsOverrideTheRunsDefaultsOnly) {
  Outputs outputs;
  ASSERT_TRUE(Read({"-title", "Mine"}, &outputs).ok());
  render::FlameGraphOptions graph;
  graph.title = "Off-CPU Time Flame Graph";
  graph.palette = render::Palette::kBlue;
  ASSERT_TRUE(render::ApplyGraphOverrides(outputs.options.graph, &graph).ok());
  EXPECT_EQ(graph.title, "Mine");
  EXPECT_EQ(graph.palette, render::Palette::kBlue);
}

}  // namespace
}  // namespace profcpu::cli
