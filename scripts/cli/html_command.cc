// `profcpu html`: perf script text from anywhere (perf's own, profcpu's
// perf_script.out) -> profile.html, the page collect and postprocess write.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "fold/perf_script_import.h"
#include "render/palette.h"
#include "render/run_graph.h"
#include "render/run_page.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/version.h"

namespace profcpu::cli {
namespace {

int HtmlFailed(absl::string_view message) { return CommandFailure("html", message); }

uint64_t FirstSampleTime(const fold::Profile& profile) {
  uint64_t first = UINT64_MAX;
  for (const fold::Sample& sample : profile.samples()) first = std::min(first, sample.time_ns);
  return first == UINT64_MAX ? 0 : first;
}

}  // namespace

int RunHtml(const std::vector<std::string>& args) {
  FlagSet flags("html", "profcpu html [-o FILE] [-title TEXT] [-colors PALETTE] [FILE|-]",
                "Reads perf script text (perf script's output, or profcpu's perf_script.out) from\n"
                "FILE, or stdin when there is none or FILE is -, and writes profile.html: a\n"
                "sub-second heatmap (FlameScope's view), the flame graph of the selected time\n"
                "range and a function table, in one file that opens offline in a browser.\n"
                "Time 0 is the first sample. Only the first event met is kept, as by fold; each\n"
                "sample counts 1 (FlameScope's rule; fold sums periods instead).");
  flags.Add("o", "FILE", "", "write the page to FILE (default: stdout)");
  flags.Add("title", "TEXT", "CPU Profile", "the page's heading");
  flags.Add("subtitle", "TEXT", "", "second heading line (default: the input's name)");
  flags.Add("colors", "PALETTE", "hot",
            "frame colours: hot, mem, io, java, js, perl, dotnet, red, green, blue, aqua, "
            "yellow, purple, orange (as flamegraph -colors)");
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  if (flags.positionals().size() > 1) return HtmlFailed("give one input file (or - for stdin)");
  const std::string input = flags.positionals().empty() ? "-" : flags.positionals()[0];

  auto palette = render::ParsePalette(flags.String("colors"));
  if (!palette.ok()) return HtmlFailed(palette.status().message());
  absl::StatusOr<fold::LineReader> reader =
      input == "-" ? fold::LineReader::FromFd(base::UniqueFd(::dup(STDIN_FILENO)))
                   : fold::LineReader::Open(input);
  if (!reader.ok()) return HtmlFailed(reader.status().message());
  auto imported = fold::ImportPerfScript(*reader);
  if (!imported.ok()) {
    return HtmlFailed(absl::StrCat(input == "-" ? "stdin" : input, ": ",
                                   imported.status().message()));
  }
  WarnOverlongLines("html", imported->stats.overlong_lines);
  const fold::Profile& profile = imported->profile;
  if (profile.samples().empty()) {
    std::fprintf(stderr, "profcpu html: no samples in %s (is it perf script output?)\n",
                 input == "-" ? "stdin" : input.c_str());
  }

  render::PageSource source;
  source.generator = absl::StrCat("profcpu ", kProfcpuVersion);
  source.graph.title = flags.String("title");
  source.graph.subtitle = flags.IsSet("subtitle") ? flags.String("subtitle")
                                                   : (input == "-" ? "" : input);
  source.graph.palette = *palette;
  fold::FoldOptions fold_options;
  fold_options.keep_dotnet_tiers = fold_options.keep_anonymous_namespaces = true;
  // Palettes that colour by annotation need the frames annotated.
  source.fold = render::GraphFoldOptions(fold_options, *palette);
  source.start_ns = FirstSampleTime(profile);
  const std::string out = flags.IsSet("o") ? flags.String("o") : "/dev/stdout";
  absl::Status written = render::WriteProfilePage(profile, source, out);
  if (!written.ok()) return HtmlFailed(written.message());
  return kExitOk;
}

}  // namespace profcpu::cli
