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
#include "base/unique_fd.h"
#include "fold/line_reader.h"
#include "render/flamegraph.h"
#include "render/folded_tree_reader.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/graph_flags.h"

namespace profcpu::cli {
namespace {

int FlamegraphFailed(absl::string_view message) { return CommandFailure("flamegraph", message); }

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
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  render::FlameGraphOptions options;
  absl::StatusOr<render::GraphOverrides> overrides = ReadGraphFlags(flags);
  if (absl::Status status = overrides.ok() ? render::ApplyGraphOverrides(*overrides, &options)
                                           : overrides.status();
      !status.ok()) {
    std::fprintf(stderr, "profcpu flamegraph: %.*s\n", static_cast<int>(status.message().size()),
                 status.message().data());
    return kExitUsage;
  }

  std::vector<std::string> files = flags.positionals();
  if (files.empty()) files.push_back("-");
  render::FoldedTreeReader input(options);
  for (const std::string& file : files) {
    absl::Status status;
    if (file == "-") {
      fold::LineReader reader = fold::LineReader::FromFd(base::UniqueFd(::dup(STDIN_FILENO)));
      status = input.Read(reader);
    } else {
      auto reader = fold::LineReader::Open(file);
      if (!reader.ok()) return FlamegraphFailed(reader.status().message());
      status = input.Read(*reader);
    }
    if (!status.ok()) return FlamegraphFailed(absl::StrCat(file == "-" ? "stdin" : file, ": ", status.message()));
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
  if (!rendered.ok()) return FlamegraphFailed(rendered.message());
  if (report.total_ignored && options.total / total > 0.02) {
    std::fprintf(stderr, "Specified --total %g is less than actual total %g, so ignored\n",
                 options.total, total);
  }
  if (std::fwrite(svg.data(), 1, svg.size(), stdout) != svg.size() || std::fflush(stdout) != 0) {
    return FlamegraphFailed("writing stdout failed");
  }
  if (tree.root().total == 0) {
    std::fprintf(stderr, "ERROR: No stack counts found\n");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace profcpu::cli
