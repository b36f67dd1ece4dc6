// `profcpu collect` (a running process) and `profcpu record` (a command it
// starts): sample into a new run folder, then build every output there.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/rooted_open.h"
#include "base/run_log.h"
#include "collector/collection.h"
#include "collector/collection_outcome.h"
#include "collector/collection_text.h"
#include "collector/command_launcher.h"
#include "recording/run_directory.h"
#include "recording/run_folder.h"
#include "scripts/cli/collection_flags.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/finish_run.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/live_status.h"
#include "scripts/cli/output_flags.h"
#include "scripts/cli/pipeline.h"
#include "scripts/cli/symbol_flags.h"
#include "scripts/cli/version.h"
#include "symbolize/rooted_process_files.h"

namespace profcpu::cli {
namespace {

std::atomic<bool> g_stop_requested{false};
std::atomic<int> g_stop_signal{SIGTERM};

void OnStopSignal(int signal_number) {
  g_stop_signal = signal_number;
  g_stop_requested = true;
}

// Ctrl-C and SIGTERM end collection early; the outputs are still written.
// A second signal after collection (while outputs are built) acts normally.
void InstallStopHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

void RestoreDefaultHandlers() {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
}

// Samples as `options` say into a new run folder under `out`, builds every
// output, prints the folder's path. Shared by collect and record. Returns
// record's command's exit status (as perf record, time and strace do: CI
// pipelines depend on it), 0 for collect, kExitFailure if profcpu failed.
// `pipeline` carries the symbol flags (-symbols, -strip-tiers); its folder,
// outputs and files are filled in here.
int ProfileIntoNewRun(collector::CollectionOptions options, const std::string& out,
                      const std::vector<std::string>& argv, const render::RunOutputOptions& outputs,
                      PipelineOptions pipeline) {
  const std::vector<std::string> created = recording::MissingDirectories(out);
  auto run_dir = recording::CreateRunDirectory(out, std::time(nullptr));
  if (!run_dir.ok()) {
    recording::RemoveEmptyDirectories(created);
    return Fail(run_dir.status().message());
  }
  base::RunLog log;
  if (!log.Open(absl::StrCat(*run_dir, "/", recording::kLogFile))) {
    recording::RemoveUnstartedRun(*run_dir);
    recording::RemoveEmptyDirectories(created);
    return Fail(absl::StrCat("cannot write to ", *run_dir));
  }
  log.Info(absl::StrCat("profcpu ", kProfcpuVersion, ": ", absl::StrJoin(argv, " ")));

  options.recording_path = absl::StrCat(*run_dir, "/", recording::kRecordingFile);
  options.jit_copy_dir = absl::StrCat(*run_dir, "/", recording::kJitDir);
  options.perf_map_copy_max_bytes = collector::PerfMapCopyCapFromEnv();
  if (uint64_t cap = collector::DotnetEventsCapFromEnv(); cap > 0) {
    options.dotnet_events_max_bytes = cap;
  }
  const std::string dotnet_events_dir = absl::StrCat(*run_dir, "/", recording::kDotnetEventsDir);
  if (options.dotnet_events && ::mkdir(dotnet_events_dir.c_str(), 0755) == 0) {
    options.dotnet_events_dir = dotnet_events_dir;
  }
  options.profcpu_version = kProfcpuVersion;
  options.command_line = absl::StrJoin(argv, " ");
  options.stop_requested = &g_stop_requested;
  options.stop_signal = &g_stop_signal;
  options.log = &log;
  LiveStatus status_line;
  options.on_progress = [&status_line](const collector::Progress& p) { status_line.Update(p); };

  std::fprintf(stderr, "profcpu: profiling %s: %s%s; Ctrl-C stops early\n",
               collector::DescribeTarget(options).c_str(),
               collector::DescribeSampling(options).c_str(),
               options.duration > absl::ZeroDuration()
                   ? absl::StrCat(" for ", absl::FormatDuration(options.duration)).c_str()
                   : "");
  InstallStopHandlers();
  auto collected = collector::Collect(options);
  RestoreDefaultHandlers();
  status_line.Finish();
  if (!collected.ok()) {
    const absl::Status& error = collected.status();
    log.Info(absl::StrCat("collection failed: ", error.message()));
    log.Close();
    if (collector::IsStartupError(error)) {
      // Nothing was sampled: leave no folder behind that looks like a run,
      // nor the -out folders made for it.
      recording::RemoveUnstartedRun(*run_dir);
      recording::RemoveEmptyDirectories(created);
      return Fail(error.message());
    }
    return Fail(absl::StrCat(error.message(), " (what was recorded is kept in ", *run_dir,
                             "; profcpu postprocess -dir ", *run_dir, " builds outputs from it)"));
  }
  // Left only if some .NET process streamed its events.
  if (!options.dotnet_events_dir.empty()) ::rmdir(options.dotnet_events_dir.c_str());
  for (const collector::OutcomeLine& line : collector::CollectionOutcomeLines(options, *collected)) {
    line.warning ? log.Warn(line.text) : log.Info(line.text);
  }

  std::fprintf(stderr, "profcpu: building outputs...\n");
  std::shared_ptr<base::RootDir> target_root;
  if (auto it = collected->roots.find(static_cast<uint32_t>(collected->target_pid));
      it != collected->roots.end()) {
    target_root = it->second;
  }
  pipeline.dir = *run_dir;
  pipeline.outputs = outputs;
  symbolize::RootedProcessFiles files(collected->roots, target_root, collected->processes);
  absl::flat_hash_set<uint32_t> perf_map_never_seen;
  for (const collector::TailedPerfMap& map : collected->perf_maps) {
    if (!map.found && map.problem.empty()) perf_map_never_seen.insert(map.pid);
  }
  files.SetPerfMapNeverSeen(std::move(perf_map_never_seen));
  pipeline.files = &files;
  auto result = RebuildOutputs(pipeline, &log);
  if (!result.ok()) {
    log.Info(absl::StrCat("building outputs failed: ", result.status().message()));
    return Fail(absl::StrCat("building outputs in ", *run_dir,
                             " failed: ", result.status().message(),
                             " (the recording is kept; retry with profcpu postprocess -dir ",
                             *run_dir, ")"));
  }
  auto finished = FinishRun(*run_dir, *result, /*write_archive=*/true, &log);
  if (!finished.ok()) {
    return Fail(absl::StrCat("finishing ", *run_dir, ": ", finished.status().message()));
  }
  std::fprintf(stderr, "profcpu: %s\n", finished->c_str());
  std::printf("%s\n", run_dir->c_str());
  if (options.command.empty()) return kExitOk;
  if (collected->command_exit_code != 0) {
    std::fprintf(stderr, "profcpu: the command exited with status %d\n",
                 collected->command_exit_code);
  }
  return collected->command_exit_code;
}

}  // namespace

int RunCollect(const std::vector<std::string>& args) {
  FlagSet flags("collect",
                "profcpu collect {-pid PID | -container ID | -a} [-duration SEC] [-freq HZ] "
                "[-out DIR]",
                "Samples the on-CPU stacks (kernel, native and JIT frames) of a running process "
                "and its threads\n(including threads it starts meanwhile), of every process of a "
                "container, or of every\nprocess on the machine, then writes profile.html, "
                "flamegraph.svg, folded_stacks.out,\nperf_script.out, metadata.json, profcpu.log, the recording "
                "and prof.tar.gz into DIR/HH-MM-SS_YYYY-MM-DD/\nand prints that folder's path. "
                "Stops after the duration, on Ctrl-C or SIGTERM (outputs are\nstill written), or "
                "when the process (or every process of the container) has exited.");
  AddTargetFlags(&flags);
  AddSamplingFlags(&flags);
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  if (!flags.positionals().empty()) {
    return UsageError(flags, absl::StrCat("unexpected argument '", flags.positionals()[0], "'"));
  }
  collector::CollectionOptions options;
  if (absl::Status s = ReadTargetFlags(flags, &options); !s.ok()) {
    return absl::IsInvalidArgument(s) ? UsageError(flags, s.message()) : Fail(s.message());
  }
  if (absl::Status s = ReadSamplingFlags(flags, &options); !s.ok()) {
    return UsageError(flags, s.message());
  }
  // Fail before creating a run folder when the target plainly does not exist.
  if (options.pid > 0 && ::kill(options.pid, 0) != 0 && errno == ESRCH) {
    return Fail(absl::StrCat("no process with pid ", options.pid));
  }
  std::vector<std::string> argv = {"profcpu", "collect"};
  argv.insert(argv.end(), args.begin(), args.end());
  if (absl::Status s = ReadDotnetFlags(flags, &options); !s.ok()) {
    return UsageError(flags, s.message());
  }
  render::RunOutputOptions outputs;
  if (absl::Status s = ReadRunOutputFlags(flags, &outputs); !s.ok()) {
    return UsageError(flags, s.message());
  }
  PipelineOptions pipeline;
  if (absl::Status s = ReadSymbolFlags(flags, /*collecting=*/true, &pipeline); !s.ok()) {
    return UsageError(flags, s.message());
  }
  return ProfileIntoNewRun(options, flags.String("out"), argv, outputs, pipeline);
}

int RunRecord(const std::vector<std::string>& args) {
  FlagSet flags("record", "profcpu record [-freq HZ] [-out DIR] -- COMMAND [ARGS...]",
                "Starts COMMAND and samples it and every thread and process it starts until it "
                "exits\n(Ctrl-C or SIGTERM is passed to it), then writes the same outputs as "
                "collect and\nprints the run folder's path. Exits with COMMAND's status (127 if it is not "
                "found, 126 if\nit cannot be executed), as perf record and time do.");
  AddSamplingFlags(&flags);
  flags.StopAtFirstPositional();
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  if (flags.positionals().empty()) return UsageError(flags, "record needs a command to run");
  // A program that cannot run fails before any folder is made, with the
  // shell's statuses: 127 not found, 126 not executable.
  if (absl::StatusOr<std::string> program = collector::FindProgram(flags.positionals()[0]);
      !program.ok()) {
    Fail(program.status().message());
    return absl::IsNotFound(program.status()) ? kExitCommandNotFound : kExitCommandNotExecutable;
  }
  collector::CollectionOptions options;
  options.command = flags.positionals();
  if (absl::Status s = ReadSamplingFlags(flags, &options); !s.ok()) {
    return UsageError(flags, s.message());
  }
  if (absl::Status s = ReadDotnetFlags(flags, &options); !s.ok()) {
    return UsageError(flags, s.message());
  }
  render::RunOutputOptions outputs;
  if (absl::Status s = ReadRunOutputFlags(flags, &outputs); !s.ok()) {
    return UsageError(flags, s.message());
  }
  // A .NET command started here writes perf maps from its first method on
  // (unless its environment already says otherwise); the session then keeps
  // its jitdump going (perfmap_session.h).
  if (options.manage_dotnet_perfmaps) ::setenv("DOTNET_PerfMapEnabled", "1", /*overwrite=*/0);
  std::vector<std::string> argv = {"profcpu", "record"};
  argv.insert(argv.end(), args.begin(), args.end());
  PipelineOptions pipeline;
  if (absl::Status s = ReadSymbolFlags(flags, /*collecting=*/true, &pipeline); !s.ok()) {
    return UsageError(flags, s.message());
  }
  return ProfileIntoNewRun(options, flags.String("out"), argv, outputs, pipeline);
}

}  // namespace profcpu::cli
