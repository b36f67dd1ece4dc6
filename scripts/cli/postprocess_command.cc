// `profcpu postprocess -dir DIR`: rebuilds every output of a run folder from
// its recording alone. DIR may hold nothing but prof.tar.gz copied from the
// machine it was taken on; the recording, symbol snapshot and the other
// inputs are unpacked from it first (not the outputs rebuilt here).
#include <sys/stat.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "archive/run_archive.h"
#include "base/run_log.h"
#include "recording/run_folder.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/finish_run.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/output_flags.h"
#include "scripts/cli/pipeline.h"
#include "scripts/cli/symbol_flags.h"
#include "scripts/cli/version.h"

namespace profcpu::cli {

int RunPostprocess(const std::vector<std::string>& args) {
  FlagSet flags("postprocess", "profcpu postprocess -dir DIR",
                "Rebuilds profile.html, flamegraph.svg, folded_stacks.out, perf_script.out and "
                "metadata.json\nin DIR from the recording, on any machine: frames are named from the symbol "
                "snapshot taken\nwhen the profile was collected. DIR may hold only prof.tar.gz; "
                "its inputs are unpacked first\n(existing files are kept; not the outputs rebuilt here). "
                "prof.tar.gz is created if DIR "
                "has none.\nThe filters (-pid, -tid, -comm, -from/-to, -no-idle) keep some samples "
                "only, in every output;\n-format adds exports; the graph flags change "
                "flamegraph.svg.");
  flags.Add("dir", "DIR", "", "run folder (or a folder holding prof.tar.gz) (required)");
  AddSymbolFlags(&flags);
  AddSymbolServerFlags(&flags, /*collecting=*/false);
  AddRunOutputFlags(&flags);
  AddFilterFlags(&flags);
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  // Every option is parsed here, once, into the pipeline's typed options.
  PipelineOptions pipeline;
  absl::Status read = ReadRunOutputFlags(flags, &pipeline.outputs);
  if (read.ok()) read = ReadFilterFlags(flags, &pipeline.filter);
  if (read.ok()) read = ReadSymbolFlags(flags, /*collecting=*/false, &pipeline);
  if (!read.ok()) return UsageError(flags, read.message());
  std::string dir = flags.String("dir");
  if (dir.empty() && flags.positionals().size() == 1) dir = flags.positionals()[0];
  if (dir.empty()) return UsageError(flags, "postprocess needs -dir DIR");
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Fail(absl::StrCat(dir, " is not a directory"));
  }

  absl::StatusOr<archive::RunInputs> inputs = archive::UnpackRunInputs(
      dir, pipeline.outputs.html, [](const std::string& archive) {
        std::fprintf(stderr, "profcpu: unpacking %s\n", archive.c_str());
      });
  if (!inputs.ok()) return Fail(inputs.status().message());
  base::RunLog log;
  if (!log.Open(absl::StrCat(dir, "/", recording::kLogFile))) {
    return Fail(absl::StrCat("cannot write to ", dir));
  }
  std::vector<std::string> argv = {"profcpu", "postprocess"};
  argv.insert(argv.end(), args.begin(), args.end());
  log.Info(absl::StrCat("profcpu ", kProfcpuVersion, ": ", absl::StrJoin(argv, " ")));

  pipeline.dir = dir;
  auto result = RebuildOutputs(pipeline, &log);
  if (!result.ok()) return Fail(result.status().message());
  auto finished = FinishRun(dir, *result, /*write_archive=*/!inputs->had_archive, &log);
  if (!finished.ok()) return Fail(finished.status().message());
  std::fprintf(stderr, "profcpu: %s\n", finished->c_str());
  std::printf("%s\n", dir.c_str());
  return kExitOk;
}

}  // namespace profcpu::cli
