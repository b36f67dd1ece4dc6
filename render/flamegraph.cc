#include "render/flamegraph.h"

#include <algorithm>
#include <vector>

#include "base/status_macros.h"
#include "render/flamegraph_layout.h"
#include "render/frame_writer.h"
#include "render/stack_shaper.h"
#include "render/svg_document.h"

namespace profcpu::render {
namespace {

// Output bytes per frame besides its name, which appears twice (title, label).
constexpr size_t kFrameOverhead = 200;

// The count that spans the whole width: the tree's total, or --total when it
// is larger (flamegraph.pl ignores a smaller one, with a warning).
double FullCount(double actual, const FlameGraphOptions& options, double count_unit,
                 FlameGraphReport* report) {
  if (options.total <= 0) return actual;
  const double wanted = options.total / count_unit;
  if (wanted < actual) {
    report->total_ignored = true;
    return actual;
  }
  return wanted;
}

// Frames narrower than min_width are not drawn. Their time stays in their
// parent, whose bar just shows a gap where they would be, exactly as in
// flamegraph.pl; as callees are never wider than their caller, whole subtrees
// drop out. Returns the narrowest count drawn.
double MinDrawnCount(const FlameGraphOptions& options, double full_count) {
  if (options.min_width_is_percent) return full_count * options.min_width / 100;
  return options.min_width * full_count / (options.width - 2 * FlameGraphLayout::kSidePad);
}

}  // namespace

FrameTreeOptions TreeOptionsFor(const FlameGraphOptions& options, bool differential) {
  FrameTreeOptions tree;
  tree.flamechart = options.flamechart;
  tree.differential = differential;
  return tree;
}

FrameTree BuildFlameGraphTree(const fold::FoldedProfile& profile,
                              const FlameGraphOptions& options) {
  FrameTreeOptions tree_options = TreeOptionsFor(options, profile.differential);
  StackShaper shaper(options);
  if (!shaper.active()) {
    if (!tree_options.flamechart && !tree_options.differential &&
        ValidateFlameGraphOptions(options).ok()) {
      // What AppendFlameGraph will draw: frames at least this wide.
      uint64_t total = 0;
      for (const fold::FoldedStack& stack : profile.stacks) {
        total = SaturatingAdd(total, stack.count);
      }
      const double count_unit = profile.count_unit > 0 ? profile.count_unit : 1;
      FlameGraphReport unused;
      tree_options.drop_callees_below =
          MinDrawnCount(options, FullCount(static_cast<double>(total), options, count_unit,
                                           &unused));
    }
    return FrameTree::Build(profile, tree_options);
  }
  FrameTree::Builder builder(tree_options);
  std::vector<absl::string_view> frames;
  for (const fold::FoldedStack& stack : profile.stacks) {
    frames.clear();
    for (uint32_t id : stack.frames) frames.push_back(profile.name(id));
    builder.Add(shaper.Shape(frames), stack.count,
                profile.differential ? FoldedDelta(stack) : 0);
  }
  return std::move(builder).Finish();
}

absl::Status AppendFlameGraph(const FrameTree& tree, const FlameGraphOptions& options,
                              absl::string_view count_name, double count_unit,
                              std::string* out, FlameGraphReport* report) {
  PROFCPU_RETURN_IF_ERROR(ValidateFlameGraphOptions(options));
  FlameGraphReport ignored;
  if (report == nullptr) report = &ignored;
  *report = FlameGraphReport();
  if (!options.count_name.empty()) count_name = options.count_name;
  if (!(count_unit > 0)) count_unit = 1;
  if (tree.root().total == 0) {
    WriteNoSamplesDocument(options, count_name, out);
    return absl::OkStatus();
  }

  // Two passes over the frames drawn: the first sizes the image and the
  // buffer, the second writes.
  const double full_count =
      FullCount(static_cast<double>(tree.root().total), options, count_unit, report);
  const double min_count = MinDrawnCount(options, full_count);
  uint32_t max_depth = 0;
  size_t bytes = DocumentStartSizeHint();
  tree.ForEachAtLeast(min_count, [&](uint32_t id, uint32_t depth, uint64_t) {
    max_depth = std::max(max_depth, depth);
    bytes += kFrameOverhead + (id == 0 ? 3 : 2 * tree.name(tree.nodes()[id].name).size());
    ++report->frames_drawn;
  });
  out->reserve(out->size() + bytes);

  const FlameGraphLayout layout = FlameGraphLayout::Compute(options, max_depth + 1, full_count);
  WriteDocumentStart(layout, options, count_name, out);
  CountScale scale;
  scale.full_count = full_count;
  scale.unit = count_unit * options.factor;
  FrameWriter writer(tree, layout, options, count_name, scale, out);
  tree.ForEachAtLeast(min_count, [&writer](uint32_t id, uint32_t depth, uint64_t start) {
    writer.Write(id, depth, start);
  });
  WriteDocumentEnd(out);
  return absl::OkStatus();
}

absl::Status AppendFlameGraph(const fold::FoldedProfile& profile,
                              const FlameGraphOptions& options, std::string* out,
                              FlameGraphReport* report) {
  PROFCPU_RETURN_IF_ERROR(ValidateFlameGraphOptions(options));
  const FrameTree tree = BuildFlameGraphTree(profile, options);
  return AppendFlameGraph(tree, options, profile.count_name, profile.count_unit, out, report);
}

absl::StatusOr<std::string> RenderFlameGraph(const fold::FoldedProfile& profile,
                                             const FlameGraphOptions& options) {
  std::string svg;
  PROFCPU_RETURN_IF_ERROR(AppendFlameGraph(profile, options, &svg));
  return svg;
}

}  // namespace profcpu::render
