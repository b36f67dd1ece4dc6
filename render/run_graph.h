// A run's flamegraph.svg before the user's graph flags: the title, palette
// and units its recording's mode calls for, and how the stacks must be folded
// for the palette chosen.
#ifndef PROFCPU_RENDER_RUN_GRAPH_H_
#define PROFCPU_RENDER_RUN_GRAPH_H_

#include <string>

#include "absl/strings/string_view.h"
#include "fold/folded_writer.h"
#include "render/flamegraph_options.h"
#include "render/palette.h"

namespace profcpu::render {

// The graph a recording of `mode` ("cpu", "offcpu", "wall") gets by default:
// off-CPU time is drawn in cool colours, wall time draws its [off-cpu] subtree
// blue and on-CPU time warm; counts are "microseconds" when the weights are
// time; `target` is the subtitle.
FlameGraphOptions DefaultGraphOptions(absl::string_view mode, bool microseconds,
                                      std::string target);

// How to fold for the flame graph: palettes that pick hues by annotation
// (java, js, perl, dotnet) need "_[k]", "_[j]" (and "_[p]") marks, which
// folded_stacks.out leaves out as the original profcpu did.
fold::FoldOptions GraphFoldOptions(fold::FoldOptions options, Palette palette);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_RUN_GRAPH_H_
