// `profcpu diff A B`: difffolded.pl. Pairs two folded files stack by stack
// into "stack countA countB" lines, the input of a differential flame graph:
//   profcpu diff before.folded after.folded | profcpu flamegraph > diff.svg
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "fold/folded_diff.h"
#include "fold/folded_reader.h"
#include "fold/folded_writer.h"
#include "fold/line_reader.h"
#include "fold/output_buffer.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {
namespace {

int Failed(absl::string_view message) { return CommandFailure("diff", message); }

// `path` "-" reads stdin, as the other FlameGraph commands do.
absl::StatusOr<fold::FoldedProfile> ReadFile(const std::string& path) {
  absl::StatusOr<fold::LineReader> reader =
      path == "-" ? fold::LineReader::FromFd(base::UniqueFd(::dup(STDIN_FILENO)))
                  : fold::LineReader::Open(path);
  if (!reader.ok()) return reader.status();
  fold::FoldedReadStats stats;
  auto profile = fold::ReadFoldedProfile(*reader, &stats);
  if (!profile.ok()) {
    return absl::Status(profile.status().code(),
                        absl::StrCat(path, ": ", profile.status().message()));
  }
  if (stats.ignored_lines + stats.overlong_lines > 0) {
    std::fprintf(stderr, "profcpu diff: %s: ignored %llu lines that are not \"stack count\"\n",
                 path.c_str(),
                 static_cast<unsigned long long>(stats.ignored_lines + stats.overlong_lines));
  }
  return profile;
}

}  // namespace

int RunDiff(const std::vector<std::string>& args) {
  FlagSet flags("diff", "profcpu diff [-n] [-s] BEFORE AFTER",
                "Pairs the stacks of two folded files (profcpu fold, folded_stacks.out) as\n"
                "difffolded.pl does and prints \"stack count_before count_after\" lines on stdout,\n"
                "for a differential flame graph: width shows AFTER, red frames grew, blue ones\n"
                "shrank.\n"
                "  profcpu diff before.folded after.folded | profcpu flamegraph > diff.svg\n"
                "Stacks that vanished have no width in that graph; swap the files and add\n"
                "--negate to see them.");
  flags.Add("n", "", "", "normalize: scale BEFORE's counts to AFTER's total");
  flags.Add("s", "", "", "strip hex numbers (addresses) from names, so they pair up");
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  if (flags.positionals().size() != 2) {
    return UsageError(flags, "needs two folded files, BEFORE and AFTER");
  }
  if (flags.positionals()[0] == "-" && flags.positionals()[1] == "-") {
    return UsageError(flags, "only one of BEFORE and AFTER can be stdin (-)");
  }
  auto before = ReadFile(flags.positionals()[0]);
  if (!before.ok()) return Failed(before.status().message());
  auto after = ReadFile(flags.positionals()[1]);
  if (!after.ok()) return Failed(after.status().message());
  fold::FoldedDiffOptions options;
  options.normalize = flags.Bool("n");
  options.strip_hex = flags.Bool("s");
  fold::OutputBuffer out(stdout);
  absl::Status written = fold::WriteFolded(fold::DiffFolded(*before, *after, options), &out);
  if (!written.ok()) return Failed(absl::StrCat("writing stdout: ", written.message()));
  return kExitOk;
}

}  // namespace profcpu::cli
