#include "render/flamegraph_options.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace profcpu::render {
namespace {

// Both strings go into the <style> sheet, where text escaping does not help:
// allow only characters that cannot end a declaration, a rule or the element.
bool OnlyCharacters(absl::string_view text, absl::string_view extra) {
  for (char c : text) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && extra.find(c) == absl::string_view::npos) return false;
  }
  return true;
}

absl::Status Invalid(absl::string_view option, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("flame graph option ", option, ": ", why));
}

}  // namespace

absl::Status ValidateFlameGraphOptions(const FlameGraphOptions& options) {
  // 20 pixels are the left and right margins; the upper bounds only keep the
  // arithmetic far from overflow.
  if (options.width <= 20 || options.width > 10'000'000) {
    return Invalid("width", absl::StrCat(options.width, " is not in (20, 10000000] pixels"));
  }
  if (options.frame_height <= 0 || options.frame_height > 10'000) {
    return Invalid("frame height", absl::StrCat(options.frame_height, " is not in (0, 10000] pixels"));
  }
  if (!std::isfinite(options.font_size) || options.font_size <= 0 || options.font_size > 10'000) {
    return Invalid("font size", absl::StrCat(options.font_size, " is not in (0, 10000] pixels"));
  }
  if (!std::isfinite(options.font_width) || options.font_width < 0.01 || options.font_width > 100) {
    return Invalid("font width", absl::StrCat(options.font_width, " is not in [0.01, 100]"));
  }
  if (!std::isfinite(options.min_width) || options.min_width < 0) {
    return Invalid("min width", absl::StrCat(options.min_width, " is negative or not a number"));
  }
  if (options.min_width_is_percent && options.min_width > 100) {
    return Invalid("min width", absl::StrCat(options.min_width, "% is more than 100%"));
  }
  if (options.font_type.empty() || !OnlyCharacters(options.font_type, " -_,")) {
    return Invalid("font type",
                   "must be letters, digits, spaces, '-', '_' and ',' (a CSS font-family)");
  }
  if (options.search_color.empty() || !OnlyCharacters(options.search_color, "#(),. %")) {
    return Invalid("search color", "must be a CSS colour such as #e600e6 or rgb(230,0,230)");
  }
  if (!std::isfinite(options.total) || options.total < 0) {
    return Invalid("total", absl::StrCat(options.total, " is negative or not a number"));
  }
  if (!std::isfinite(options.factor) || options.factor <= 0 || options.factor > 1e12) {
    return Invalid("factor", absl::StrCat(options.factor, " is not in (0, 1e12]"));
  }
  if (!options.bg_colors.empty()) {
    if (absl::Status status = ParseBackground(options.bg_colors).status(); !status.ok()) {
      return Invalid("bgcolors", status.message());
    }
  }
  return absl::OkStatus();
}

}  // namespace profcpu::render
