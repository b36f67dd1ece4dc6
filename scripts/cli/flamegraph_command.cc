// `profcpu flamegraph`: a drop-in for flamegraph.pl. Reads folded stacks
// (one or two count columns) and writes the SVG to stdout. The input is
// streamed into the frame tree line by line, so memory follows the number of
// distinct frames, not the size of the input.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collector/base/unique_fd.h"
#include "fold/folded_reader.h"
#include "fold/line_reader.h"
#include "render/flamegraph.h"
#include "render/frame_tree.h"
#include "render/stack_shaper.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/graph_flags.h"

namespace profcpu::cli {
namespace {

int Fail(absl::string_view message) { return CommandFailure("flamegraph", message); }

// Feeds folded lines into a frame tree, as flamegraph.pl reads them.
class FoldedTreeReader {
 public:
  explicit FoldedTreeReader(const render::FlameGraphOptions& options)
      : shaper_(options), builder_(render::TreeOptionsFor(options, /*differential=*/false)) {}

  absl::Status Read(fold::LineReader& reader) {
    absl::string_view line;
    fold::FoldedLine parsed;
    while (reader.Next(&line)) {
      ++stats_.lines;
      if (!fold::ParseFoldedLine(line, &parsed)) {
        ++stats_.ignored_lines;
        continue;
      }
      Add(parsed);
    }
    stats_.overlong_lines += reader.overlong_lines();
    return reader.status();
  }

  const fold::FoldedReadStats& stats() const { return stats_; }
  double count_unit() const { return std::pow(10.0, -decimals_); }
  // The sum of the counts as written, for flamegraph.pl's low-count warning.
  double total() const { return total_units_ * count_unit(); }
  render::FrameTree Finish() && { return std::move(builder_).Finish(); }

 private:
  void Add(const fold::FoldedLine& parsed) {
    const int decimals = std::max(parsed.count.decimals,
                                  parsed.differential ? parsed.baseline.decimals : 0);
    if (decimals > decimals_) {
      // Counts so far were integers in the old unit: scale them to the new one.
      uint64_t multiplier = 1;
      for (int i = decimals_; i < decimals; ++i) multiplier *= 10;
      builder_.ScaleCounts(multiplier);
      total_units_ *= static_cast<double>(multiplier);
      decimals_ = decimals;
    }
    const uint64_t count = fold::ScaleCount(parsed.count, decimals_);
    int64_t delta = 0;
    if (parsed.differential) {
      builder_.MakeDifferential();
      fold::FoldedStack stack;
      stack.count = count;
      stack.baseline = fold::ScaleCount(parsed.baseline, decimals_);
      delta = render::FoldedDelta(stack);
    }
    total_units_ += static_cast<double>(count);
    fold::SplitFoldedFrames(parsed.stack, &frames_);
    builder_.Add(shaper_.Shape(frames_), count, delta);
  }

  render::StackShaper shaper_;
  render::FrameTree::Builder builder_;
  std::vector<absl::string_view> frames_;
  fold::FoldedReadStats stats_;
  int decimals_ = 0;
  double total_units_ = 0;
};

}  // namespace

int RunFlamegraph(const std::vector<std::string>& args) {
  FlagSet flags(
      "flamegraph", "profcpu flamegraph [FLAGS] [FILE...|-]",
      "Renders folded stacks (\"frame;frame;... count\", from profcpu fold, folded_stacks.out\n"
      "or any stackcollapse script) as an interactive SVG flame graph on stdout, as\n"
      "flamegraph.pl does, with its flags. Lines with two counts (\"stack before after\",\n"
      "from profcpu diff) make a differential graph: width is the second count, red frames\n"
      "grew, blue ones shrank. Reads the FILEs in turn, or stdin when there is none or\n"
      "FILE is -. Open the SVG in a browser: hover for details, click to zoom, Ctrl-F to\n"
      "search by regular expression, Ctrl-I to toggle case.");
  AddGraphFlags(&flags, GraphFlagStyle::kFlamegraphPl);
  if (std::optional<int> done = ParseCommandFlags(args, "flamegraph", &flags)) return *done;
  render::FlameGraphOptions options;
  if (absl::Status status = ReadGraphFlags(flags, &options); !status.ok()) {
    std::fprintf(stderr, "profcpu flamegraph: %.*s\n", static_cast<int>(status.message().size()),
                 status.message().data());
    return kExitUsage;
  }

  std::vector<std::string> files = flags.positionals();
  if (files.empty()) files.push_back("-");
  FoldedTreeReader input(options);
  for (const std::string& file : files) {
    absl::Status status;
    if (file == "-") {
      fold::LineReader reader = fold::LineReader::FromFd(base::UniqueFd(::dup(STDIN_FILENO)));
      status = input.Read(reader);
    } else {
      auto reader = fold::LineReader::Open(file);
      if (!reader.ok()) return Fail(reader.status().message());
      status = input.Read(*reader);
    }
    if (!status.ok()) return Fail(absl::StrCat(file == "-" ? "stdin" : file, ": ", status.message()));
  }

  // flamegraph.pl's warnings, in its words.
  const fold::FoldedReadStats stats = input.stats();
  const double total = input.total();
  const double count_unit = input.count_unit();
  if (options.count_name.empty() || options.count_name == "samples") {
    if (total < 100) {
      std::fprintf(stderr, "Stack count is low (%g). Did something go wrong?\n", total);
    }
  }
  if (stats.ignored_lines > 0) {
    std::fprintf(stderr, "Ignored %llu lines with invalid format\n",
                 static_cast<unsigned long long>(stats.ignored_lines));
  }
  WarnOverlongLines("flamegraph", stats.overlong_lines);

  const render::FrameTree tree = std::move(input).Finish();
  std::string svg;
  render::FlameGraphReport report;
  absl::Status rendered =
      render::AppendFlameGraph(tree, options, "samples", count_unit, &svg, &report);
  if (!rendered.ok()) return Fail(rendered.message());
  if (report.total_ignored && options.total / total > 0.02) {
    std::fprintf(stderr, "Specified --total %g is less than actual total %g, so ignored\n",
                 options.total, total);
  }
  if (std::fwrite(svg.data(), 1, svg.size(), stdout) != svg.size() || std::fflush(stdout) != 0) {
    return Fail("writing stdout failed");
  }
  if (tree.root().total == 0) {
    std::fprintf(stderr, "ERROR: No stack counts found\n");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace profcpu::cli
