// What a flame graph looks like: flamegraph.pl's options, with its defaults,
// so a graph rendered with no options looks like the one users know.
#ifndef PROFCPU_RENDER_FLAMEGRAPH_OPTIONS_H_
#define PROFCPU_RENDER_FLAMEGRAPH_OPTIONS_H_

#include <string>

#include "absl/status/status.h"
#include "render/palette.h"

namespace profcpu::render {

struct FlameGraphOptions {
  // Heading. Empty: "Flame Graph", "Icicle Graph" when inverted, "Flame
  // Chart" for a flame chart.
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
  // Frames named this, and every frame under them, take the blue palette
  // whatever `palette` is: a wall-clock graph draws its "[off-cpu]" subtree
  // cool and its on-CPU time warm. Empty: no such subtree.
  std::string cool_subtree;
  // Background gradient (flamegraph.pl --bgcolors): yellow, blue, green, grey
  // or a flat #rrggbb. Empty: the one that goes with the palette.
  std::string bg_colors;
  // Colour by a hash of the name's first and last characters (flamegraph.pl
  // --hash) instead of the default seeding by the whole name.
  bool hash_colors = false;
  // A fresh random colour for every frame (flamegraph.pl --random). The only
  // option that makes two renders of one profile differ.
  bool random_colors = false;
  // Icicle graph: root at the top, callees below.
  bool inverted = false;
  // Reverse every stack first (flamegraph.pl --reverse): leaves become roots,
  // so the graph merges by callee.
  bool reverse = false;
  // Flame chart (flamegraph.pl --flamechart): stacks left to right in input
  // order (time order, when the input is), merged only with their neighbours.
  bool flamechart = false;
  // Differential graphs: swap the hues (red shrank, blue grew) and the sign
  // of the change shown in titles.
  bool negate = false;
  // The 100% width in counts (flamegraph.pl --total), to draw several graphs
  // to one scale; 0 or less than the profile's total: the profile's total.
  double total = 0;
  // Multiply counts shown in titles (flamegraph.pl --factor), e.g. to turn
  // samples at 99 Hz into milliseconds.
  double factor = 1;
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
