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

// flamegraph.pl's --colors themes. The multi-palettes that pick a theme from
// the name (java, js, perl, wakeup, chain) are not here yet.
enum class Palette {
  kHot,  // the default: reds to yellows
  kMem,
  kIo,
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

// The colour of a frame named `name` (clean UTF-8; annotations such as "_[k]"
// included, as flamegraph.pl keys colours on them too).
//   by_hash == false: flamegraph.pl's default since 2019: seed Perl's drand48
//     with the sum of the name's code points and take the first draw.
//   by_hash == true: flamegraph.pl --hash: a weighted hash of the first three
//     characters (and of the last three for the other channels), so similar
//     names get similar colours.
Rgb FrameColor(Palette palette, bool by_hash, absl::string_view name);

// The two stops of the background gradient that goes with a palette.
struct Background {
  absl::string_view top;
  absl::string_view bottom;
};
Background BackgroundFor(Palette palette);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_PALETTE_H_
