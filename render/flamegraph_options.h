// What a flame graph looks like. Defaults are flamegraph.pl's, so a graph
// rendered with no options looks like the one users know. The struct grows
// with flamegraph.pl's remaining options (reverse, flamechart, negate, total,
// factor, differential counts, the name-based palettes).
#ifndef PROFCPU_RENDER_FLAMEGRAPH_OPTIONS_H_
#define PROFCPU_RENDER_FLAMEGRAPH_OPTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "render/palette.h"

namespace profcpu::render {

struct FlameGraphOptions {
  // Heading. Empty: "Flame Graph", or "Icicle Graph" when inverted.
  std::string title;
  // Second heading line; none when empty.
  std::string subtitle;
  int width = 1200;             // image width, pixels
  int frame_height = 16;        // height of one stack level, pixels
  double font_size = 12;        // pixels
  // Average glyph width as a fraction of font_size: labels are cut to the
  // number of characters this predicts will fit (no font metrics needed).
  double font_width = 0.59;
  // CSS font-family; letters, digits, spaces, '-', '_' and ',' only.
  std::string font_type = "Verdana";
  // Frames narrower than this are not drawn (their time stays in the parent):
  // pixels, or percent of the total when min_width_is_percent.
  double min_width = 0.1;
  bool min_width_is_percent = false;
  // What the counts are ("samples", "bytes"). Empty: the profile's count_name,
  // which is "samples" unless the folding stage said otherwise.
  std::string count_name;
  // Shown before the hovered frame's description.
  std::string name_type = "Function:";
  Palette palette = Palette::kHot;
  // Colour by a hash of the name's first and last characters (flamegraph.pl
  // --hash) instead of the default seeding by the whole name.
  bool hash_colors = false;
  // Icicle graph: root at the top, callees below.
  bool inverted = false;
  // Free text kept in an XML comment, for whoever reads the file.
  std::string notes;
  // Fill of frames that match a search: a CSS colour ("#rrggbb", "rgb(...)", a name).
  std::string search_color = "rgb(230,0,230)";
};

// InvalidArgument naming the first option that is out of range or holds
// characters that could not be placed in the SVG's CSS safely.
absl::Status ValidateFlameGraphOptions(const FlameGraphOptions& options);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_FLAMEGRAPH_OPTIONS_H_
