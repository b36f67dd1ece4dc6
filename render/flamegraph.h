// Renders folded stacks as an interactive SVG flame graph with the look and
// behaviour of Brendan Gregg's flamegraph.pl: hover for details, click to
// zoom, Ctrl-F to search by regular expression, state kept in the URL.
#ifndef PROFCPU_RENDER_FLAMEGRAPH_H_
#define PROFCPU_RENDER_FLAMEGRAPH_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fold/folded_profile.h"
#include "render/flamegraph_options.h"

namespace profcpu::render {

// The whole SVG document. Well-formed XML whatever bytes the frame names hold.
// A profile without samples gives a small SVG saying so. Fails only for
// invalid options (ValidateFlameGraphOptions).
absl::StatusOr<std::string> RenderFlameGraph(const fold::FoldedProfile& profile,
                                             const FlameGraphOptions& options);

// Same, appended to *out, which lets a caller reuse one buffer.
absl::Status AppendFlameGraph(const fold::FoldedProfile& profile,
                              const FlameGraphOptions& options, std::string* out);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_FLAMEGRAPH_H_
