// The flame graph's look as the user asked for it (the graph flags, parsed
// once): each field given replaces the graph's default, the rest keep it. A
// run's defaults (title, palette per mode) are known only once its recording
// is read, so the request travels as this value and is applied then.
#ifndef PROFCPU_RENDER_GRAPH_OVERRIDES_H_
#define PROFCPU_RENDER_GRAPH_OVERRIDES_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "render/flamegraph_options.h"
#include "render/palette.h"

namespace profcpu::render {

struct GraphOverrides {
  std::optional<std::string> title;
  std::optional<std::string> subtitle;
  std::optional<int> width;
  std::optional<int> frame_height;
  struct MinWidth {
    double value = 0;
    bool is_percent = false;
  };
  std::optional<MinWidth> min_width;
  std::optional<std::string> font_type;
  std::optional<double> font_size;
  std::optional<double> font_width;
  std::optional<std::string> count_name;
  std::optional<std::string> name_type;
  std::optional<Palette> palette;
  std::optional<std::string> cool_subtree;
  std::optional<std::string> bg_colors;
  std::optional<bool> hash_colors;
  std::optional<bool> random_colors;
  std::optional<bool> reverse;
  std::optional<bool> inverted;
  std::optional<bool> flamechart;
  std::optional<bool> negate;
  std::optional<std::string> notes;
  std::optional<double> total;
  std::optional<double> factor;
};

// Replaces `options`' fields with those `overrides` holds, then checks the
// result (ValidateFlameGraphOptions): InvalidArgument naming the option.
absl::Status ApplyGraphOverrides(const GraphOverrides& overrides, FlameGraphOptions* options);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_GRAPH_OVERRIDES_H_
