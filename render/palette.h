// Frame colours, computed as flamegraph.pl computes them so a profcpu graph
// looks like the ones users know, and so one function keeps one colour from
// run to run and across graphs (no random state anywhere).
#ifndef PROFCPU_RENDER_PALETTE_H_
#define PROFCPU_RENDER_PALETTE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::render {

// flamegraph.pl's --colors themes, plus `dotnet`. The multi-palettes (java,
// js, perl, wakeup, chain, dotnet) pick one of the single-hue ones by the
// frame's name (palette_classify.h).
enum class Palette {
  kHot,  // the default: reds to yellows
  kMem,
  kIo,
  kWakeup,
  kChain,
  kJava,
  kJs,
  kPerl,
  kDotnet,
  kRed,
  kGreen,
  kBlue,
  kAqua,
  kYellow,
  kPurple,
  kOrange,
};

// "hot", "mem", ... as flamegraph.pl's --colors spells them.
absl::StatusOr<Palette> ParsePalette(absl::string_view name);
absl::string_view PaletteName(Palette palette);

struct Rgb {
  uint8_t r = 0;
  uint8_t g = 0;
  uint8_t b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

// Appends "rgb(R,G,B)".
void AppendRgb(Rgb color, std::string* out);

// The three numbers in [0, 1] a colour is made from (flamegraph.pl's v1, v2,
// v3): hot, mem and io use all three, the single hues only the first.
struct ColorDraws {
  double v1 = 0;
  double v2 = 0;
  double v3 = 0;
};

// The draws for a frame named `name` (clean UTF-8; annotations such as "_[k]"
// included, as flamegraph.pl keys colours on them too).
//   by_hash == false: flamegraph.pl's default since 2019: seed Perl's drand48
//     with the sum of the name's code points and take the first draw, for
//     each of the three (so all three are equal).
//   by_hash == true: flamegraph.pl --hash: a weighted hash of the first three
//     characters (and of the last three for v2 and v3), so similar names get
//     similar colours.
ColorDraws NameDraws(bool by_hash, absl::string_view name);

// The colour of `name` in `palette` made from `draws`; a multi-palette first
// picks its hue from the name.
Rgb PaletteColor(Palette palette, absl::string_view name, const ColorDraws& draws);

// PaletteColor with NameDraws: the same name always gets the same colour.
Rgb FrameColor(Palette palette, bool by_hash, absl::string_view name);

// A differential graph's colour (flamegraph.pl's color_scale): red for a
// frame whose own count grew, blue for one that shrank, white when equal,
// deeper as |delta| nears max_delta. `negate` swaps the hues.
Rgb DifferenceColor(int64_t delta, uint64_t max_delta, bool negate);

// The two stops of the background gradient (equal for a flat colour).
struct Background {
  std::string top;
  std::string bottom;
};
// The gradient that goes with a palette, as flamegraph.pl picks it.
Background BackgroundFor(Palette palette);
// flamegraph.pl --bgcolors: "yellow", "blue", "green", "grey", or a flat
// "#rrggbb" (hex digits only, as it lands in an attribute).
absl::StatusOr<Background> ParseBackground(absl::string_view name);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_PALETTE_H_
