// Renders a synthetic profile of 50,000 distinct stacks and prints how many
// megabytes of folded input that is per second. Usage:
//   render_benchmark [--write-folded FILE] [--write-svg FILE] [--folded FILE]
// Writing the folded text lets flamegraph.pl be timed on the very same input.
// --folded renders a run's folded_stacks.out instead (e.g. busy_stacks 40 2,
// ~200k deep and distinct stacks) and also times the graph's tree built the
// way it was before (stacks sorted, then added one by one), checking that
// both give the same SVG bytes.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fold/folded_profile.h"
#include "fold/folded_reader.h"
#include "render/flamegraph.h"
#include "render/flamegraph_layout.h"
#include "render/frame_tree.h"

namespace profcpu::render {
namespace {

constexpr int kStacks = 50'000;

// Stacks walk a random call tree: each level picks one of a few callees of
// the current frame, so stacks share prefixes the way real ones do, and the
// names are as long as C++ symbols usually are.
fold::FoldedProfile SyntheticProfile() {
  std::mt19937_64 random(42);
  const char* const kComms[] = {"java", "node", "dotnet", "nginx", "postgres"};
  fold::FoldedProfile profile;
  std::vector<std::string> frames;
  for (int i = 0; i < kStacks; ++i) {
    frames.clear();
    uint64_t state = random() % 5;
    frames.push_back(kComms[state]);
    const int depth = 8 + static_cast<int>(random() % 40);
    for (int d = 0; d < depth; ++d) {
      state = state * 7 + random() % (d < 6 ? 3 : 8);
      const uint64_t id = state % 20'000;
      frames.push_back(absl::StrCat("ns", id % 37, "::Class", id % 211, "::method_", id,
                                    "(int, std::string const&)"));
    }
    std::vector<absl::string_view> views(frames.begin(), frames.end());
    profile.AddStack(views, 1 + random() % 50);
  }
  // Sorted by the joined text, as stackcollapse writes folded stacks.
  std::sort(profile.stacks.begin(), profile.stacks.end(),
            [&profile](const fold::FoldedStack& a, const fold::FoldedStack& b) {
              return profile.JoinedText(a) < profile.JoinedText(b);
            });
  return profile;
}

std::string FoldedText(const fold::FoldedProfile& profile) {
  std::string text;
  for (const fold::FoldedStack& stack : profile.stacks) {
    absl::StrAppend(&text, profile.JoinedText(stack), " ", stack.count, "\n");
  }
  return text;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The graph's tree as FrameTree::Build made it before it partitioned the
// stacks: all of them sorted by frame ids, then added one by one.
FrameTree SortedAddTree(const fold::FoldedProfile& profile, const FlameGraphOptions& options) {
  // As BuildFlameGraphTree sets it for -minwidth in pixels, without --total.
  FrameTreeOptions tree_options;
  uint64_t total = 0;
  for (const fold::FoldedStack& stack : profile.stacks) total = SaturatingAdd(total, stack.count);
  tree_options.drop_callees_below = options.min_width * static_cast<double>(total) /
                                    (options.width - 2 * FlameGraphLayout::kSidePad);
  FrameTree::Builder builder(tree_options);
  std::vector<uint32_t> tree_name(profile.names().size());
  for (size_t i = 0; i < tree_name.size(); ++i) tree_name[i] = builder.InternName(profile.name(i));
  std::vector<uint32_t> order(profile.stacks.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&profile](uint32_t a, uint32_t b) {
    const std::vector<uint32_t>& x = profile.stacks[a].frames;
    const std::vector<uint32_t>& y = profile.stacks[b].frames;
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
  });
  builder.ExpectGroupedInput();
  std::vector<uint32_t> names;
  for (uint32_t i : order) {
    names.clear();
    for (uint32_t id : profile.stacks[i].frames) names.push_back(tree_name[id]);
    builder.AddInterned(names, profile.stacks[i].count);
  }
  return std::move(builder).Finish();
}

// --folded FILE: best of 5 of the tree (now and before) and of the SVG
// written from it.
int RenderFoldedFile(const std::string& path, const std::string& svg_path) {
  std::ifstream file(path);
  if (!file) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  std::optional<std::string> text = contents.str();
  const fold::FoldedProfile profile = fold::ParseFoldedText(*text);
  size_t frames = 0;
  for (const fold::FoldedStack& stack : profile.stacks) frames += stack.frames.size();
  std::printf("%zu stacks, %zu frames, %zu names, folded input %.1f MB\n", profile.stacks.size(),
              frames, profile.names().size(), text->size() / 1e6);
  *text = std::string();
  const FlameGraphOptions options;
  double tree_best = 1e9, before_best = 1e9, write_best = 1e9;
  size_t tree_nodes = 0, before_nodes = 0;
  std::string svg, before_svg;
  for (int round = 0; round < 5; ++round) {
    auto start = std::chrono::steady_clock::now();
    const FrameTree tree = BuildFlameGraphTree(profile, options);
    tree_best = std::min(tree_best, SecondsSince(start));
    tree_nodes = tree.nodes().size();
    start = std::chrono::steady_clock::now();
    svg.clear();
    if (!AppendFlameGraph(tree, options, profile.count_name, profile.count_unit, &svg).ok()) {
      return 1;
    }
    write_best = std::min(write_best, SecondsSince(start));
    start = std::chrono::steady_clock::now();
    const FrameTree before = SortedAddTree(profile, options);
    before_best = std::min(before_best, SecondsSince(start));
    before_nodes = before.nodes().size();
    before_svg.clear();
    if (!AppendFlameGraph(before, options, profile.count_name, profile.count_unit, &before_svg)
             .ok()) {
      return 1;
    }
  }
  if (!svg_path.empty()) std::ofstream(svg_path) << svg;
  std::printf("tree, stacks partitioned frame by frame: %.3f s, %zu nodes\n", tree_best,
              tree_nodes);
  std::printf("tree, stacks sorted then added (before): %.3f s, %zu nodes\n", before_best,
              before_nodes);
  std::printf("svg written from the tree: %.3f s, %.1f MB; same bytes both ways: %s\n",
              write_best, svg.size() / 1e6, svg == before_svg ? "yes" : "NO");
  return svg == before_svg ? 0 : 1;
}

int Main(int argc, char** argv) {
  std::string svg_path, folded_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--write-svg") == 0) svg_path = argv[i + 1];
    if (std::strcmp(argv[i], "--folded") == 0) folded_path = argv[i + 1];
  }
  if (!folded_path.empty()) return RenderFoldedFile(folded_path, svg_path);
  const fold::FoldedProfile profile = SyntheticProfile();
  const std::string folded = FoldedText(profile);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--write-folded") == 0) std::ofstream(argv[i + 1]) << folded;
  }

  // Memory the profile and the folded text take, to tell the renderer's own
  // peak apart from them.
  rusage before{};
  getrusage(RUSAGE_SELF, &before);

  constexpr int kRounds = 5;
  double best_seconds = 1e9;
  std::string svg;
  for (int round = 0; round < kRounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::string> rendered = RenderFlameGraph(profile, FlameGraphOptions{});
    const auto end = std::chrono::steady_clock::now();
    if (!rendered.ok()) {
      std::fprintf(stderr, "render failed: %s\n", rendered.status().ToString().c_str());
      return 1;
    }
    best_seconds = std::min(best_seconds, std::chrono::duration<double>(end - start).count());
    svg = *std::move(rendered);
  }
  if (!svg_path.empty()) std::ofstream(svg_path) << svg;

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double megabytes = folded.size() / 1e6;
  std::printf("stacks %d, folded input %.1f MB, svg %.1f MB\n", kStacks, megabytes,
              svg.size() / 1e6);
  std::printf("best of %d: %.3f s = %.1f MB/s (%.1f MiB/s) of folded input\n", kRounds,
              best_seconds, megabytes / best_seconds,
              folded.size() / 1048576.0 / best_seconds);
  std::printf("peak RSS %.1f MB, of which %.1f MB before rendering (profile, folded text)\n",
              usage.ru_maxrss / 1024.0, before.ru_maxrss / 1024.0);
  return 0;
}

}  // namespace
}  // namespace profcpu::render

int main(int argc, char** argv) { return profcpu::render::Main(argc, argv); }
