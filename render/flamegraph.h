// Renders folded stacks as an interactive SVG flame graph with the look and
// behaviour of Brendan Gregg's flamegraph.pl: hover for details, click to
// zoom, Ctrl-F to search by regular expression, state kept in the URL. Also
// its variants: icicle graphs, reversed stacks, flame charts, differential
// graphs.
#ifndef PROFCPU_RENDER_FLAMEGRAPH_H_
#define PROFCPU_RENDER_FLAMEGRAPH_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fold/folded_profile.h"
#include "render/flamegraph_options.h"
#include "render/frame_tree.h"

namespace profcpu::render {

// What a render did, for the caller to report.
struct FlameGraphReport {
  size_t frames_drawn = 0;
  // options.total was below the profile's total and so ignored, as
  // flamegraph.pl ignores it.
  bool total_ignored = false;
};

// The merged tree `options` draws for `profile`: stacks reversed and waker
// frames marked as the options say (stack_shaper.h), merged as a flame graph
// or a flame chart, with deltas when the profile is differential. Callees of
// frames too narrow to draw at the options' -minwidth may be left out
// (FrameTreeOptions::drop_callees_below): the tree is for drawing.
FrameTree BuildFlameGraphTree(const fold::FoldedProfile& profile,
                              const FlameGraphOptions& options);
// The tree options that go with `options`.
FrameTreeOptions TreeOptionsFor(const FlameGraphOptions& options, bool differential);

// Appends the whole SVG document for `tree` to *out. Well-formed XML whatever
// bytes the frame names hold; a tree without samples gives a small SVG saying
// so. `count_name` is used when options.count_name is empty; each unit of the
// tree's counts stands for `count_unit` (FoldedProfile::count_unit). Fails
// only for invalid options (ValidateFlameGraphOptions).
absl::Status AppendFlameGraph(const FrameTree& tree, const FlameGraphOptions& options,
                              absl::string_view count_name, double count_unit,
                              std::string* out, FlameGraphReport* report = nullptr);

// The same for a folded profile.
absl::Status AppendFlameGraph(const fold::FoldedProfile& profile,
                              const FlameGraphOptions& options, std::string* out,
                              FlameGraphReport* report = nullptr);
absl::StatusOr<std::string> RenderFlameGraph(const fold::FoldedProfile& profile,
                                             const FlameGraphOptions& options);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_FLAMEGRAPH_H_
