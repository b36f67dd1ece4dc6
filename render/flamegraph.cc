#include "render/flamegraph.h"

#include <algorithm>

#include "collector/base/status_macros.h"
#include "render/flamegraph_layout.h"
#include "render/frame_tree.h"
#include "render/frame_writer.h"
#include "render/svg_document.h"

namespace profcpu::render {
namespace {

// Output bytes per frame besides its name, which appears twice (title, label).
constexpr size_t kFrameOverhead = 200;

// Frames narrower than min_width are not drawn. Their time stays in their
// parent, whose bar just shows a gap where they would be, exactly as in
// flamegraph.pl; as callees are never wider than their caller, whole subtrees
// drop out. Returns the narrowest count drawn.
double MinDrawnCount(const FlameGraphOptions& options, uint64_t total) {
  const double count = static_cast<double>(total);
  if (options.min_width_is_percent) return count * options.min_width / 100;
  return options.min_width * count / (options.width - 2 * FlameGraphLayout::kSidePad);
}

}  // namespace

absl::Status AppendFlameGraph(const fold::FoldedProfile& profile,
                              const FlameGraphOptions& options, std::string* out) {
  PROFCPU_RETURN_IF_ERROR(ValidateFlameGraphOptions(options));
  const absl::string_view count_name =
      options.count_name.empty() ? profile.count_name : options.count_name;
  const FrameTree tree = FrameTree::Build(profile);
  if (tree.root().total == 0) {
    WriteNoSamplesDocument(options, count_name, out);
    return absl::OkStatus();
  }

  // Two passes over the frames drawn: the first sizes the image and the
  // buffer, the second writes.
  const double min_count = MinDrawnCount(options, tree.root().total);
  uint32_t max_depth = 0;
  size_t bytes = DocumentStartSizeHint();
  tree.ForEachAtLeast(min_count, [&](uint32_t id, uint32_t depth, uint64_t) {
    max_depth = std::max(max_depth, depth);
    bytes += kFrameOverhead + (id == 0 ? 3 : 2 * tree.name(tree.nodes()[id].name).size());
  });
  out->reserve(out->size() + bytes);

  const FlameGraphLayout layout =
      FlameGraphLayout::Compute(options, max_depth + 1, tree.root().total);
  WriteDocumentStart(layout, options, count_name, out);
  FrameWriter writer(tree, layout, options, count_name, out);
  tree.ForEachAtLeast(min_count, [&writer](uint32_t id, uint32_t depth, uint64_t start) {
    writer.Write(id, depth, start);
  });
  WriteDocumentEnd(out);
  return absl::OkStatus();
}

absl::StatusOr<std::string> RenderFlameGraph(const fold::FoldedProfile& profile,
                                             const FlameGraphOptions& options) {
  std::string svg;
  PROFCPU_RETURN_IF_ERROR(AppendFlameGraph(profile, options, &svg));
  return svg;
}

}  // namespace profcpu::render
