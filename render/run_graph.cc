#include "render/run_graph.h"

#include <utility>

#include "fold/recording_summary.h"

namespace profcpu::render {

FlameGraphOptions DefaultGraphOptions(absl::string_view mode, bool microseconds,
                                      std::string target) {
  FlameGraphOptions graph;
  graph.title = "CPU Flame Graph";
  if (mode == "offcpu") {
    // Cool colours say "not running", as Brendan Gregg's off-CPU graphs do.
    graph.title = "Off-CPU Time Flame Graph";
    graph.palette = Palette::kBlue;
  } else if (mode == "wall") {
    graph.title = "Wall-Clock Time Flame Graph ([on-cpu] and [off-cpu])";
    graph.cool_subtree = fold::kOffCpuFrame;  // waiting in blue, running in the palette's warm hues
  }
  if (microseconds) graph.count_name = "microseconds";
  graph.subtitle = std::move(target);
  return graph;
}

fold::FoldOptions GraphFoldOptions(fold::FoldOptions options, Palette palette) {
  switch (palette) {
    case Palette::kDotnet:
      options.annotate_precompiled = true;
      [[fallthrough]];
    case Palette::kJava:
    case Palette::kJs:
    case Palette::kPerl:
      options.annotate_kernel = true;
      options.annotate_jit = true;
      break;
    default:
      break;
  }
  return options;
}

}  // namespace profcpu::render
