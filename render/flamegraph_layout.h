// Where things go on the page, derived from the options and the tree's size
// with flamegraph.pl's paddings, so frames sit where users expect them.
#ifndef PROFCPU_RENDER_FLAMEGRAPH_LAYOUT_H_
#define PROFCPU_RENDER_FLAMEGRAPH_LAYOUT_H_

#include <cstdint>

#include "render/flamegraph_options.h"

namespace profcpu::render {

struct FlameGraphLayout {
  static constexpr double kSidePad = 10;  // left and right margin
  static constexpr double kFrameGap = 1;  // blank line between stack levels

  double width = 0;             // image width
  double height = 0;            // image height
  double drawable_width = 0;    // width of the root frame
  double frame_height = 0;      // one stack level, gap included
  double frames_top = 0;        // y of the level nearest the top when inverted
  double bottom_pad = 0;        // below the frames: the details line
  double pixels_per_count = 0;
  bool inverted = false;

  // `levels`: stack levels drawn, the root included. `full_count`: the count
  // that spans the whole width (the root's, or flamegraph.pl's --total).
  static FlameGraphLayout Compute(const FlameGraphOptions& options, uint32_t levels,
                                  double full_count) {
    FlameGraphLayout layout;
    const double top_pad = options.font_size * 3;  // the title line
    const double subtitle_pad = options.subtitle.empty() ? 0 : options.font_size * 2;
    layout.width = options.width;
    layout.drawable_width = options.width - 2 * kSidePad;
    layout.frame_height = options.frame_height;
    layout.bottom_pad = options.font_size * 2 + 10;
    layout.frames_top = top_pad + subtitle_pad;
    layout.height = levels * layout.frame_height + layout.frames_top + layout.bottom_pad;
    layout.pixels_per_count = full_count <= 0 ? 0 : layout.drawable_width / full_count;
    layout.inverted = options.inverted;
    return layout;
  }

  // Top and bottom edge of the frames at `depth` (the root is depth 0): rising
  // from the bottom, or hanging from the top in an icicle graph.
  double FrameTop(uint32_t depth) const {
    if (inverted) return frames_top + depth * frame_height;
    return height - bottom_pad - (depth + 1.0) * frame_height + kFrameGap;
  }
  double FrameBottom(uint32_t depth) const {
    if (inverted) return frames_top + (depth + 1.0) * frame_height - kFrameGap;
    return height - bottom_pad - depth * frame_height;
  }
};

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_FLAMEGRAPH_LAYOUT_H_
