// Reshapes each input stack the way flamegraph.pl's options ask before it is
// merged: --reverse turns it around (the leaf becomes the root), and the
// chain palette marks the frames after a "--" separator with "_[w]" (they are
// the wakers' stacks in a chain graph, coloured apart).
#ifndef PROFCPU_RENDER_STACK_SHAPER_H_
#define PROFCPU_RENDER_STACK_SHAPER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "render/flamegraph_options.h"

namespace profcpu::render {

class StackShaper {
 public:
  explicit StackShaper(const FlameGraphOptions& options);

  // Whether Shape() changes anything.
  bool active() const { return reverse_ || mark_wakers_; }

  // The frames to merge for `frames` (root first). The result points into
  // `frames` and into this object; it is valid until the next call.
  absl::Span<const absl::string_view> Shape(absl::Span<const absl::string_view> frames);

 private:
  bool reverse_;
  bool mark_wakers_;
  std::vector<absl::string_view> shaped_;
  std::vector<std::string> marked_;  // "name_[w]", one slot per frame
};

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_STACK_SHAPER_H_
