#include "render/frame_writer.h"

#include <cmath>

#include "absl/strings/match.h"
#include "render/dotnet_label.h"
#include "render/number_format.h"
#include "render/palette.h"
#include "render/xml_text.h"

namespace profcpu::render {
namespace {

// Hundredths of a pixel. Rounding both edges (not the width) keeps every
// callee inside its caller after rounding, which the script's zoom relies on.
int64_t ToHundredths(double pixels) { return std::llround(pixels * 100); }

constexpr double kLabelInset = 3;  // text starts this far right of the frame's edge
constexpr double kLabelDrop = 3;   // baseline below the frame's middle

}  // namespace

absl::string_view StripAnnotation(absl::string_view name) {
  for (absl::string_view suffix : {"_[k]", "_[w]", "_[i]", "_[j]", "_[p]"}) {
    if (absl::EndsWith(name, suffix)) return name.substr(0, name.size() - suffix.size());
  }
  return name;
}

FrameWriter::FrameWriter(const FrameTree& tree, const FlameGraphLayout& layout,
                         const FlameGraphOptions& options, absl::string_view count_name,
                         const CountScale& scale, std::string* out)
    : tree_(tree),
      layout_(layout),
      options_(options),
      scale_(scale),
      out_(out),
      label_char_width_(options.font_size * options.font_width),
      names_(tree.name_count()) {
  count_suffix_.push_back(' ');
  AppendXmlText(count_name, &count_suffix_);
  count_suffix_.append(", ");
  height_ = "\" height=\"";
  AppendFixed(layout.frame_height - FlameGraphLayout::kFrameGap, 1, &height_);
  height_.append("\" fill=\"");
  // flamegraph.pl names the root "all" but colours it as the empty name.
  root_info_.ready = true;
  root_info_.label = "all";
  root_info_.label_code_points = 3;
  root_info_.color = FrameColor(options.palette, options.hash_colors, "");
  if (options.random_colors) random_.seed(std::random_device()());
  MarkCoolSubtrees();
}

void FrameWriter::MarkCoolSubtrees() {
  if (options_.cool_subtree.empty()) return;
  uint32_t marker = FrameTree::kNone;
  for (uint32_t id = 0; id < tree_.name_count() && marker == FrameTree::kNone; ++id) {
    if (tree_.name(id) == options_.cool_subtree) marker = id;  // names are interned: one match
  }
  if (marker == FrameTree::kNone) return;
  const std::vector<FrameTree::Node>& nodes = tree_.nodes();
  cool_.assign(nodes.size(), false);
  // A node is created after its parent, so one pass in id order sees every
  // parent's mark before its children need it.
  for (size_t id = 1; id < nodes.size(); ++id) {
    cool_[id] = nodes[id].name == marker || cool_[nodes[id].parent];
  }
}

FrameWriter::NameInfo FrameWriter::Describe(absl::string_view raw_name) {
  absl::string_view clean = raw_name;
  if (!IsCleanText(raw_name)) {
    std::string& copy = cleaned_names_.emplace_back();
    AppendCleanText(raw_name, &copy);
    clean = copy;
  }
  NameInfo info;
  info.ready = true;
  info.label = StripAnnotation(clean);
  info.label_code_points = CountCodePoints(info.label);
  // Separator frames flamegraph.pl greys out: "-" between user and kernel
  // stacks, "--" between the stacks of a chain graph.
  if (clean == "--") {
    info.color = {160, 160, 160};
    info.separator = true;
  } else if (clean == "-") {
    info.color = {200, 200, 200};
    info.separator = true;
  } else {
    info.color = FrameColor(options_.palette, options_.hash_colors, clean);
  }
  return info;
}

const FrameWriter::NameInfo& FrameWriter::Info(uint32_t name_id) {
  NameInfo& info = names_[name_id];
  if (!info.ready) info = Describe(tree_.name(name_id));
  return info;
}

const std::string& FrameWriter::DepthAttributes(uint32_t depth) {
  while (depth_y_.size() <= 2 * static_cast<size_t>(depth) + 1) {
    const uint32_t d = static_cast<uint32_t>(depth_y_.size() / 2);
    const double top = layout_.FrameTop(d);
    const double bottom = layout_.FrameBottom(d);
    std::string& rect_y = depth_y_.emplace_back();
    AppendShortest(top, &rect_y);
    std::string& text_y = depth_y_.emplace_back();
    AppendShortest(kLabelDrop + (top + bottom) / 2, &text_y);
  }
  return depth_y_[2 * static_cast<size_t>(depth)];
}

void FrameWriter::WriteLabel(const NameInfo& info, double width) {
  // flamegraph.pl's rule, in code points: as many characters as the average
  // glyph width allows; when the name is longer the last two become "..";
  // fewer than three characters' room shows nothing.
  const double room = width / label_char_width_;
  if (room < 3) return;
  if (room >= static_cast<double>(info.label_code_points)) {
    AppendXmlEscaped(info.label, out_);
    return;
  }
  const size_t chars = static_cast<size_t>(room);
  // A .NET method keeps its type and name before anything is cut.
  const std::string short_label = ShortDotnetLabel(info.label);
  if (!short_label.empty()) {
    if (room >= static_cast<double>(CountCodePoints(short_label))) {
      AppendXmlEscaped(short_label, out_);
    } else {
      AppendXmlEscaped(PrefixCodePoints(short_label, chars - 2), out_);
      out_->append("..");
    }
    return;
  }
  AppendXmlEscaped(PrefixCodePoints(info.label, chars - 2), out_);
  out_->append("..");
}

Rgb FrameWriter::ColorOf(uint32_t node_id, const NameInfo& info) {
  if (info.separator) return info.color;
  if (tree_.differential()) {
    return DifferenceColor(tree_.delta(node_id), tree_.max_delta(), options_.negate);
  }
  const bool cool = !cool_.empty() && cool_[node_id];
  const Palette palette = cool ? Palette::kBlue : options_.palette;
  if (options_.random_colors) {
    // flamegraph.pl --random: three fresh draws for every frame.
    std::uniform_real_distribution<double> draw(0, 1);
    ColorDraws draws;
    draws.v1 = draw(random_);
    draws.v2 = draw(random_);
    draws.v3 = draw(random_);
    return PaletteColor(palette, node_id == 0 ? "" : info.label, draws);
  }
  return cool ? FrameColor(palette, options_.hash_colors, info.label) : info.color;
}

void FrameWriter::WriteTitle(uint32_t node_id, const NameInfo& info) {
  const FrameTree::Node& node = tree_.nodes()[node_id];
  // The root spans the full count (the tree's total, or --total).
  const double count =
      node_id == 0 ? scale_.full_count : static_cast<double>(node.total);
  AppendXmlEscaped(info.label, out_);
  out_->append(" (");
  double shown;  // the count as printed, for the percentage (flamegraph.pl's order)
  if (scale_.unit == 1 && count == static_cast<double>(node.total)) {
    AppendWithThousands(node.total, out_);
    shown = count;
  } else {
    shown = AppendRoundedWithThousands(count * scale_.unit, out_);
  }
  out_->append(count_suffix_);
  if (node_id == 0) {
    out_->append("100");
  } else {
    AppendFixed(100.0 * shown / (scale_.full_count * scale_.unit), 2, out_);
  }
  out_->push_back('%');
  if (tree_.differential() && node_id != 0) {
    // "; +1.25%": the change of the frame's own count, as a share of the
    // whole. (flamegraph.pl also divides by --factor here; the change is
    // not multiplied by it, so that would misstate it.)
    int64_t delta = tree_.delta(node_id);
    if (options_.negate) delta = delta == INT64_MIN ? INT64_MAX : -delta;
    out_->append("; ");
    if (delta > 0) out_->push_back('+');
    AppendFixed(100.0 * static_cast<double>(delta) / scale_.full_count, 2, out_);
    out_->push_back('%');
  }
  out_->push_back(')');
}

void FrameWriter::Write(uint32_t node_id, uint32_t depth, uint64_t start) {
  const FrameTree::Node& node = tree_.nodes()[node_id];
  const NameInfo& info = node_id == 0 ? root_info_ : Info(node.name);
  const double left = FlameGraphLayout::kSidePad +
                      static_cast<double>(start) * layout_.pixels_per_count;
  // The root spans the whole width even when --total makes it wider than
  // the samples (flamegraph.pl draws it so).
  const double right = node_id == 0 ? left + layout_.drawable_width
                                    : left + static_cast<double>(node.total) *
                                                 layout_.pixels_per_count;
  const int64_t left_h = ToHundredths(left);
  const int64_t right_h = ToHundredths(right);
  const std::string& rect_y = DepthAttributes(depth);
  const std::string& text_y = depth_y_[2 * static_cast<size_t>(depth) + 1];

  out_->append("<g><title>");
  WriteTitle(node_id, info);
  out_->append("</title><rect x=\"");
  AppendHundredths(left_h, out_);
  out_->append("\" y=\"");
  out_->append(rect_y);
  out_->append("\" width=\"");
  AppendHundredths(right_h - left_h, out_);
  out_->append(height_);
  AppendRgb(ColorOf(node_id, info), out_);
  out_->append("\" rx=\"2\" ry=\"2\"/><text x=\"");
  AppendHundredths(left_h + static_cast<int64_t>(kLabelInset * 100), out_);
  out_->append("\" y=\"");
  out_->append(text_y);
  out_->append("\">");
  WriteLabel(info, right - left);
  out_->append("</text></g>\n");
}

}  // namespace profcpu::render
