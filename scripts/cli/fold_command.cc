// `profcpu fold`: a drop-in for stackcollapse-perf.pl (FlameGraph commit
// 41fee1f). Reads perf script text (perf's or profcpu's perf_script.out) and
// writes folded stacks to stdout, byte-identical to the script's output for
// the options it shares (fold/stackcollapse.h).
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "fold/line_reader.h"
#include "fold/output_buffer.h"
#include "fold/stackcollapse.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {
namespace {

int FoldFailed(absl::string_view message) { return CommandFailure("fold", message); }

// Feeds every line of `reader` to the collapser. False (after saying why) on
// a read error.
bool Consume(fold::LineReader& reader, absl::string_view name, fold::StackCollapser* collapser) {
  absl::string_view line;
  while (reader.Next(&line)) collapser->AddLine(line);
  collapser->mutable_stats().overlong_lines += reader.overlong_lines();
  if (!reader.status().ok()) {
    FoldFailed(absl::StrCat(name, ": ", reader.status().message()));
    return false;
  }
  return true;
}

}  // namespace

int RunFold(const std::vector<std::string>& args) {
  FlagSet flags(
      "fold",
      "profcpu fold [--pid] [--tid] [--kernel] [--jit] [--all] [--addrs] [--event-filter EV] "
      "[--prejit] [FILE...|-]",
      "Folds perf script text (from perf script or profcpu's perf_script.out) into one line\n"
      "per distinct stack, \"comm;outer;...;leaf count\", on stdout: the output of\n"
      "stackcollapse-perf.pl, byte for byte, ready for profcpu flamegraph or flamegraph.pl.\n"
      "Counts are the sum of the samples' periods (1 for a sample without one). Reads the\n"
      "FILEs in turn, or stdin when there is none or FILE is -. Only the samples of the\n"
      "first event met are kept unless --event-filter names one.");
  flags.Add("pid", "", "", "root frame comm-PID");
  flags.Add("tid", "", "", "root frame comm-PID/TID");
  flags.Add("kernel", "", "", "mark kernel frames with _[k]");
  flags.Add("jit", "", "", "mark JIT frames (from /tmp/perf-PID.map) with _[j]");
  flags.Add("all", "", "", "both --kernel and --jit");
  flags.Add("addrs", "", "", "name unknown frames by address: [module <addr>]");
  flags.Add("event-filter", "EV", "", "keep only samples of event EV (e.g. cycles)");
  flags.Add("prejit", "", "",
            "profcpu's own: mark .NET precompiled (ReadyToRun) frames, named \"...[PreJIT]\", "
            "with _[p] for --colors dotnet (stackcollapse-perf.pl has no such option)");
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;

  fold::StackCollapseOptions options;
  options.include_pid = flags.Bool("pid");
  options.include_tid = flags.Bool("tid");
  options.annotate_kernel = flags.Bool("kernel") || flags.Bool("all");
  options.annotate_jit = flags.Bool("jit") || flags.Bool("all");
  options.include_addrs = flags.Bool("addrs");
  options.event_filter = flags.String("event-filter");
  options.annotate_precompiled = flags.Bool("prejit");

  std::vector<std::string> files = flags.positionals();
  if (files.empty()) files.push_back("-");
  fold::StackCollapser collapser(options);
  for (const std::string& file : files) {
    if (file == "-") {
      fold::LineReader reader = fold::LineReader::FromFd(base::UniqueFd(::dup(STDIN_FILENO)));
      if (!Consume(reader, "stdin", &collapser)) return kExitFailure;
      continue;
    }
    auto reader = fold::LineReader::Open(file);
    if (!reader.ok()) return FoldFailed(reader.status().message());
    if (!Consume(*reader, file, &collapser)) return kExitFailure;
  }

  // The script's own warnings, then what it would have choked on silently.
  const fold::StackCollapseStats& stats = collapser.stats();
  if (!stats.warned_event.empty()) {
    std::fprintf(stderr, "Filtering for events of type: %s\n", stats.warned_event.c_str());
  }
  if (stats.unrecognized_lines > 0) {
    std::fprintf(stderr, "profcpu fold: %llu unrecognized lines skipped\n",
                 static_cast<unsigned long long>(stats.unrecognized_lines));
  }
  WarnOverlongLines("fold", stats.overlong_lines);
  if (stats.truncated_stacks > 0) {
    std::fprintf(stderr, "profcpu fold: %llu stacks over %zu bytes of names cut short\n",
                 static_cast<unsigned long long>(stats.truncated_stacks),
                 options.max_stack_bytes);
  }
  fold::OutputBuffer out(stdout);
  collapser.Write(&out);
  absl::Status written = out.Finish();
  if (!written.ok()) return FoldFailed(absl::StrCat("writing stdout: ", written.message()));
  return kExitOk;
}

}  // namespace profcpu::cli
