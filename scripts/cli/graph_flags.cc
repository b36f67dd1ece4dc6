#include "scripts/cli/graph_flags.h"

#include <cmath>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "render/palette.h"

namespace profcpu::cli {
namespace {

constexpr char kPalettes[] =
    "hot, mem, io, wakeup, chain, java, js, perl, dotnet (kernel, JIT, precompiled and native "
    ".NET frames apart), red, green, blue, aqua, yellow, purple, orange";

absl::Status BadValue(absl::string_view flag, absl::string_view value, absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("-", flag, " must be ", want, ", got '", value, "'"));
}

absl::Status ReadNumber(const FlagSet& flags, absl::string_view flag,
                        std::optional<double>* out) {
  if (!flags.IsSet(flag)) return absl::OkStatus();
  const std::string value = flags.String(flag);
  double number;
  if (!absl::SimpleAtod(value, &number) || !std::isfinite(number)) {
    return BadValue(flag, value, "a number");
  }
  *out = number;
  return absl::OkStatus();
}

absl::Status ReadInteger(const FlagSet& flags, absl::string_view flag, std::optional<int>* out) {
  if (!flags.IsSet(flag)) return absl::OkStatus();
  const std::string value = flags.String(flag);
  int number;
  if (!absl::SimpleAtoi(value, &number)) return BadValue(flag, value, "an integer");
  *out = number;
  return absl::OkStatus();
}

}  // namespace

void AddGraphFlags(FlagSet* flags, GraphFlagStyle style) {
  const bool all = style == GraphFlagStyle::kFlamegraphPl;
  if (all) {
    flags->Add("title", "TEXT", "",
               "heading (default \"Flame Graph\", \"Icicle Graph\", \"Flame Chart\")");
    flags->Add("subtitle", "TEXT", "", "second heading line");
  } else {
    flags->Add("title", "TEXT", "", "flamegraph.svg's heading (default \"CPU Flame Graph\", or "
               "the -mode's)");
    flags->Add("subtitle", "TEXT", "", "second heading line (default: the target)");
  }
  flags->Add("width", "PX", "1200", "image width");
  flags->Add("height", "PX", "16", "height of one frame");
  flags->Add("minwidth", "PX|N%", "0.1", "leave out frames narrower than this, in pixels or % of the total");
  if (all) {
    flags->Add("fonttype", "FONT", "Verdana", "font family");
    flags->Add("fontsize", "PX", "12", "font size");
    flags->Add("fontwidth", "F", "0.59", "average glyph width relative to the font size");
    flags->Add("countname", "TEXT", "samples", "what the counts are (bytes, ms...)");
    flags->Add("nametype", "TEXT", "Function:", "what the names are, shown on hover");
  }
  flags->Add("colors", "PALETTE", all ? "hot" : "",
             absl::StrCat("frame colours: ", kPalettes, all ? "" : " (default hot; blue for -mode offcpu)"));
  if (all) flags->Add("color", "PALETTE", "", "same as -colors");
  flags->Add("cool-subtree", "NAME", "",
             all ? "draw frames named NAME, and every frame under them, in blue (e.g. [off-cpu])"
                 : "draw frames named NAME, and every frame under them, in blue (default for "
                   "-mode wall: [off-cpu]; \"\" for none)");
  flags->Add("bgcolors", "COLOR", "", "background: yellow, blue, green, grey or #rrggbb (default: by palette)");
  flags->Add("hash", "", "", "colour by a hash of the name (similar names, similar colours)");
  if (all) flags->Add("random", "", "", "random colours (differ on every render)");
  flags->Add("reverse", "", "", "reverse every stack: merge by callee, leaves at the root");
  flags->Add("inverted", "", "", "icicle graph: root at the top");
  if (all) {
    flags->Add("flamechart", "", "", "flame chart: stacks in input (time) order, not merged by name");
    flags->Add("negate", "", "", "differential graphs: swap the hues (red shrank, blue grew)");
    flags->Add("notes", "TEXT", "", "text kept in an XML comment in the SVG");
    flags->Add("total", "N", "", "count that spans the full width (to draw graphs to one scale)");
    flags->Add("factor", "F", "1", "multiply the counts shown by F");
  }
}

absl::StatusOr<render::GraphOverrides> ReadGraphFlags(const FlagSet& flags) {
  render::GraphOverrides o;
  if (flags.IsSet("title")) o.title = flags.String("title");
  if (flags.IsSet("subtitle")) o.subtitle = flags.String("subtitle");
  PROFCPU_RETURN_IF_ERROR(ReadInteger(flags, "width", &o.width));
  PROFCPU_RETURN_IF_ERROR(ReadInteger(flags, "height", &o.frame_height));
  if (flags.IsSet("minwidth")) {
    // flamegraph.pl: /^([0-9.]+)%?$/.
    const std::string value = flags.String("minwidth");
    absl::string_view number = value;
    render::GraphOverrides::MinWidth min_width;
    min_width.is_percent = absl::ConsumeSuffix(&number, "%");
    if (number.empty() || number.find_first_not_of("0123456789.") != absl::string_view::npos ||
        !absl::SimpleAtod(number, &min_width.value)) {
      return BadValue("minwidth", value, "pixels or a percentage such as 0.5%");
    }
    o.min_width = min_width;
  }
  if (flags.IsSet("fonttype")) o.font_type = flags.String("fonttype");
  PROFCPU_RETURN_IF_ERROR(ReadNumber(flags, "fontsize", &o.font_size));
  PROFCPU_RETURN_IF_ERROR(ReadNumber(flags, "fontwidth", &o.font_width));
  if (flags.IsSet("countname")) o.count_name = flags.String("countname");
  if (flags.IsSet("nametype")) o.name_type = flags.String("nametype");
  for (absl::string_view flag : {"colors", "color"}) {
    if (!flags.IsSet(flag)) continue;
    auto palette = render::ParsePalette(flags.String(flag));
    if (!palette.ok()) return absl::InvalidArgumentError(absl::StrCat("-", flag, ": ", palette.status().message()));
    o.palette = *palette;
  }
  if (flags.IsSet("cool-subtree")) o.cool_subtree = flags.String("cool-subtree");
  if (flags.IsSet("bgcolors")) o.bg_colors = flags.String("bgcolors");
  if (flags.IsSet("hash")) o.hash_colors = flags.Bool("hash");
  if (flags.IsSet("random")) o.random_colors = flags.Bool("random");
  if (flags.IsSet("reverse")) o.reverse = flags.Bool("reverse");
  if (flags.IsSet("inverted")) o.inverted = flags.Bool("inverted");
  if (flags.IsSet("flamechart")) o.flamechart = flags.Bool("flamechart");
  if (flags.IsSet("negate")) o.negate = flags.Bool("negate");
  if (flags.IsSet("notes")) o.notes = flags.String("notes");
  PROFCPU_RETURN_IF_ERROR(ReadNumber(flags, "total", &o.total));
  PROFCPU_RETURN_IF_ERROR(ReadNumber(flags, "factor", &o.factor));
  return o;
}

}  // namespace profcpu::cli
