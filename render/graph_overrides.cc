#include "render/graph_overrides.h"

namespace profcpu::render {
namespace {

template <typename T>
void Override(const std::optional<T>& given, T* field) {
  if (given.has_value()) *field = *given;
}

}  // namespace

absl::Status ApplyGraphOverrides(const GraphOverrides& o, FlameGraphOptions* options) {
  Override(o.title, &options->title);
  Override(o.subtitle, &options->subtitle);
  Override(o.width, &options->width);
  Override(o.frame_height, &options->frame_height);
  if (o.min_width.has_value()) {
    options->min_width = o.min_width->value;
    options->min_width_is_percent = o.min_width->is_percent;
  }
  Override(o.font_type, &options->font_type);
  Override(o.font_size, &options->font_size);
  Override(o.font_width, &options->font_width);
  Override(o.count_name, &options->count_name);
  Override(o.name_type, &options->name_type);
  Override(o.palette, &options->palette);
  Override(o.cool_subtree, &options->cool_subtree);
  Override(o.bg_colors, &options->bg_colors);
  Override(o.hash_colors, &options->hash_colors);
  Override(o.random_colors, &options->random_colors);
  Override(o.reverse, &options->reverse);
  Override(o.inverted, &options->inverted);
  Override(o.flamechart, &options->flamechart);
  Override(o.negate, &options->negate);
  Override(o.notes, &options->notes);
  Override(o.total, &options->total);
  Override(o.factor, &options->factor);
  // Ranges, and what may go into the SVG's style sheet.
  return ValidateFlameGraphOptions(*options);
}

}  // namespace profcpu::render
