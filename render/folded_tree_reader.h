// Reads folded stacks ("frame;frame;... count", one or two count columns) into
// a frame tree, line by line, as flamegraph.pl reads them: memory follows the
// distinct frames, not the input's size. Counts with decimals ("1.5") are
// kept exactly by scaling every count to the finest unit met so far.
#ifndef PROFCPU_RENDER_FOLDED_TREE_READER_H_
#define PROFCPU_RENDER_FOLDED_TREE_READER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "fold/folded_reader.h"
#include "fold/line_reader.h"
#include "render/flamegraph_options.h"
#include "render/frame_tree.h"
#include "render/stack_shaper.h"

namespace profcpu::render {

class FoldedTreeReader {
 public:
  explicit FoldedTreeReader(const FlameGraphOptions& options);

  // Adds every line of `reader`; lines that are not folded stacks are counted
  // in stats().ignored_lines. The reader's error, if any.
  absl::Status Read(fold::LineReader& reader);

  const fold::FoldedReadStats& stats() const { return stats_; }
  // What one unit of the tree's counts stands for (10^-decimals).
  double count_unit() const;
  // The sum of the counts as written, for flamegraph.pl's low-count warning.
  double total() const { return total_units_ * count_unit(); }
  FrameTree Finish() && { return std::move(builder_).Finish(); }

 private:
  void Add(const fold::FoldedLine& parsed);

  StackShaper shaper_;
  FrameTree::Builder builder_;
  std::vector<absl::string_view> frames_;
  fold::FoldedReadStats stats_;
  int decimals_ = 0;
  double total_units_ = 0;
};

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_FOLDED_TREE_READER_H_
