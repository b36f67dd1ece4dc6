// Writes one frame of the flame graph: a <g> holding the hover <title>, the
// <rect> and the <text> label. Work that depends only on the name (cleaning
// untrusted bytes, stripping annotations, the colour) is done once per
// distinct name, not once per frame.
#ifndef PROFCPU_RENDER_FRAME_WRITER_H_
#define PROFCPU_RENDER_FRAME_WRITER_H_

#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "render/flamegraph_layout.h"
#include "render/flamegraph_options.h"
#include "render/frame_tree.h"
#include "render/palette.h"

namespace profcpu::render {

// The frame's name as labels show it: flamegraph.pl drops the "_[k]", "_[w]",
// "_[i]" and "_[j]" annotations that stackcollapse adds (they only pick
// colours), and profcpu its own "_[p]" (precompiled .NET code).
absl::string_view StripAnnotation(absl::string_view name);

// How the counts of a tree are shown.
struct CountScale {
  // The count that spans the whole width (the root's, or --total).
  double full_count = 0;
  // What one count stands for in titles (FoldedProfile::count_unit times
  // --factor). Exactly 1 prints counts as integers.
  double unit = 1;
};

class FrameWriter {
 public:
  // All arguments must outlive the writer; `out` receives the frames.
  FrameWriter(const FrameTree& tree, const FlameGraphLayout& layout,
              const FlameGraphOptions& options, absl::string_view count_name,
              const CountScale& scale, std::string* out);

  // `depth` and `start` as FrameTree::ForEachAtLeast gives them.
  void Write(uint32_t node_id, uint32_t depth, uint64_t start);

 private:
  struct NameInfo {
    bool ready = false;
    absl::string_view label;  // clean UTF-8, annotation stripped
    size_t label_code_points = 0;
    Rgb color;
    bool separator = false;  // "-" or "--": grey whatever the palette
  };

  const NameInfo& Info(uint32_t name_id);
  NameInfo Describe(absl::string_view raw_name);
  const std::string& DepthAttributes(uint32_t depth);
  void WriteLabel(const NameInfo& info, double width);
  void WriteTitle(uint32_t node_id, const NameInfo& info);
  Rgb ColorOf(uint32_t node_id, const NameInfo& info);
  // Fills cool_ when options_.cool_subtree names a frame of the tree.
  void MarkCoolSubtrees();

  const FrameTree& tree_;
  const FlameGraphLayout& layout_;
  const FlameGraphOptions& options_;
  CountScale scale_;
  std::string* out_;
  std::string count_suffix_;   // " samples, " escaped
  std::string height_;         // `" height="15.0" fill="` text shared by all frames
  double label_char_width_;
  NameInfo root_info_;
  std::vector<NameInfo> names_;           // by name id, filled on first use
  std::deque<std::string> cleaned_names_; // names that needed cleaning (stable addresses)
  std::vector<std::string> depth_y_;      // per depth: rect y, then text y
  std::mt19937_64 random_;                // --random only
  std::vector<bool> cool_;                // by node id; empty when no cool subtree
};

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_FRAME_WRITER_H_
