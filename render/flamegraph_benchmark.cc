// Renders a synthetic profile of 50,000 distinct stacks and prints how many
// megabytes of folded input that is per second. Usage:
//   render_benchmark [--write-folded FILE] [--write-svg FILE]
// Writing the folded text lets flamegraph.pl be timed on the very same input.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "render/flamegraph.h"

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

int Main(int argc, char** argv) {
  const fold::FoldedProfile profile = SyntheticProfile();
  const std::string folded = FoldedText(profile);
  std::string svg_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--write-folded") == 0) std::ofstream(argv[i + 1]) << folded;
    if (std::strcmp(argv[i], "--write-svg") == 0) svg_path = argv[i + 1];
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
