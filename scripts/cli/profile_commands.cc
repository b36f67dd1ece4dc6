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

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/file_io.h"
#include "base/run_log.h"
#include "base/status_macros.h"
#include "collector/collection.h"
#include "collector/collection_text.h"
#include "collector/command_launcher.h"
#include "collector/perf/event_spec.h"
#include "collector/proc/container_resolver.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/finish_run.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/live_status.h"
#include "scripts/cli/output_dir.h"
#include "scripts/cli/pipeline.h"
#include "scripts/cli/output_flags.h"
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

void AddSamplingFlags(FlagSet* flags) {
  flags->Add("freq", "HZ", "99", "samples per second per thread");
  flags->Add("out", "DIR", "profilings", "parent of the run folder HH-MM-SS_YYYY-MM-DD/");
  flags->Add("event", "NAME", "cpu-clock",
             "sampling event: cpu-clock (works everywhere), task-clock, or a hardware event "
             "such as cycles or instructions where the CPU has a PMU");
  flags->Add("perfmap", "MODE", "auto",
             "auto: turn a .NET 8+ target's perf maps on for the run and off after (record: "
             "start the command with DOTNET_PerfMapEnabled=1); off: leave them as they are");
  flags->Add("dotnet-events", "MODE", "on",
             "on: save each .NET target process's runtime events (GC, exceptions, contention, "
             "JIT, thread pool) over EventPipe as dotnet/PID.nettrace and summarize them in "
             "metadata.json; off: no EventPipe session");
  flags->Add("mmap-pages", "N", "256",
             "ring buffer size per CPU in 4 KiB pages, a power of two; raise it if samples "
             "are lost at high frequencies");
  AddCallgraphFlag(flags);
  AddSymbolFlags(flags);
  AddSymbolServerFlags(flags, /*collecting=*/true);
  flags->Add("mode", "MODE", "cpu",
             "cpu: on-CPU stacks; offcpu: time blocked off the CPU with the stacks it blocked "
             "in, in microseconds, of the target's threads (-pid, -container or -a) (BPF); "
             "wall: both in one graph, rooted under [on-cpu] and [off-cpu] (BPF)");
  flags->Add("backend", "NAME", "perf",
             "on-CPU sampling: perf (every sample to user space) or bpf (stacks counted in the "
             "kernel: flat cost at high -freq; needs CAP_BPF and CAP_PERFMON)");
  flags->Add("timestamps", "", "",
             "with -backend bpf: keep each sample's time, for a perf_script.out timeline "
             "(FlameScope) and postprocess -from/-to; without it BPF counts stacks, "
             "perf_script.out holds one entry per stack per second and -from/-to are refused");
  AddRunOutputFlags(flags);  // -format, -threads, the graph's look
}


// -mode, -backend and -timestamps (collector/bpf_collection.h).
absl::Status ReadModeFlags(const FlagSet& flags, collector::CollectionOptions* options) {
  auto mode = collector::ParseProfileMode(flags.String("mode"));
  if (!mode.ok()) return mode.status();
  auto backend = collector::ParseSamplingBackend(flags.String("backend"));
  if (!backend.ok()) return backend.status();
  options->profile.mode = *mode;
  options->profile.backend = *backend;
  options->profile.timestamps = flags.Bool("timestamps");
  if (options->profile.timestamps && *backend != collector::SamplingBackend::kBpf) {
    return absl::InvalidArgumentError(
        "-timestamps goes with -backend bpf (the perf backend always keeps timestamps)");
  }
  // Wall mode adds on-CPU samples to off-CPU time: their periods must be time.
  if (*mode == collector::ProfileMode::kWall && options->sampler.event.name != "cpu-clock" &&
      options->sampler.event.name != "task-clock") {
    return absl::InvalidArgumentError(absl::StrCat(
        "-mode wall weighs on-CPU samples by their time, which '", options->sampler.event.name,
        "' does not count: use -event cpu-clock (the default) or task-clock"));
  }
  return absl::OkStatus();
}

// Parses the flags shared by collect and record into collection options.
absl::Status ReadSamplingFlags(const FlagSet& flags, collector::CollectionOptions* options) {
  int64_t freq, pages;
  int max_rate = collector::KernelMaxSampleRate();
  absl::Status status = flags.Int("freq", 1, max_rate, &freq);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        status.message(), " (the kernel's limit is kernel.perf_event_max_sample_rate)"));
  }
  if (!flags.Int("mmap-pages", 1, 1 << 20, &pages).ok() || (pages & (pages - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("-mmap-pages must be a power of two, got '", flags.String("mmap-pages"), "'"));
  }
  PROFCPU_RETURN_IF_ERROR(ReadCallgraphFlag(flags, &options->sampler));
  // -callgraph fp+cfi: BPF off-CPU switch-outs carry the user registers and
  // a stack copy for leaf repair, as perf samples do.
  options->profile.leaf_copy = options->sampler.leaf_stack_size > 0;
  if (options->sampler.dwarf_stack_size > 0 &&
      (flags.String("backend") == "bpf" || flags.String("mode") != "cpu")) {
    return absl::InvalidArgumentError(
        "-callgraph dwarf copies stacks with perf events: it goes with -backend perf and "
        "-mode cpu");
  }
  auto event = collector::ParseEventName(flags.String("event"));
  if (!event.ok()) return event.status();
  options->sampler.event = *event;
  options->sampler.rate = static_cast<uint64_t>(freq);
  options->sampler.ring_buffer_pages = static_cast<size_t>(pages);
  return ReadModeFlags(flags, options);
}

// -perfmap auto|off: whether profcpu turns .NET perf maps on for the run;
// -dotnet-events on|off: whether it saves the .NET runtime's events.
absl::Status ReadDotnetFlags(const FlagSet& flags, collector::CollectionOptions* options) {
  std::string events = flags.String("dotnet-events");
  if (events != "on" && events != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("-dotnet-events must be on or off, got '", events, "'"));
  }
  options->dotnet_events = events == "on";
  std::string mode = flags.String("perfmap");
  if (mode != "auto" && mode != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("-perfmap must be auto or off, got '", mode, "'"));
  }
  options->manage_dotnet_perfmaps = mode == "auto";
  return absl::OkStatus();
}

// -pid, -container or -a: exactly one. InvalidArgument for bad usage,
// NotFound when the container does not exist.
absl::Status ReadTargetFlags(const FlagSet& flags, collector::CollectionOptions* options) {
  int given = flags.IsSet("pid") + flags.IsSet("container") + flags.Bool("a");
  if (given != 1) {
    return absl::InvalidArgumentError(
        given == 0 ? "collect needs -pid PID, -container ID or -a"
                   : "give only one of -pid, -container and -a");
  }
  if (flags.IsSet("pid")) {
    int64_t pid;
    PROFCPU_RETURN_IF_ERROR(flags.Int("pid", 1, 0x3fffffff, &pid));
    options->pid = static_cast<pid_t>(pid);
  } else if (flags.IsSet("container")) {
    PROFCPU_ASSIGN_OR_RETURN(collector::ContainerTarget container,
                             collector::ResolveContainer(flags.String("container")));
    options->cgroup_dir = container.cgroup_dir;
    options->container_id = container.container_id;
  } else {
    options->all_processes = true;
  }
  return absl::OkStatus();
}

// Errors that stop collection before any sample was taken.
bool IsStartupError(const absl::Status& error) {
  return absl::IsNotFound(error) || absl::IsPermissionDenied(error) ||
         absl::IsUnimplemented(error) || absl::IsInvalidArgument(error);
}

// PROFCPU_PERF_MAP_MAX_BYTES lowers the most copied of one perf map while
// the target runs (tests reach the cap without writing a gigabyte); it never
// raises the cap. 0: the default.
uint64_t PerfMapCopyCap() {
  const char* text = std::getenv("PROFCPU_PERF_MAP_MAX_BYTES");
  uint64_t bytes = 0;
  if (text == nullptr || !absl::SimpleAtoi(text, &bytes)) return 0;
  return bytes < collector::PerfMapTailer::Limits().max_file_bytes ? bytes : 0;
}

void RemoveRunDirectory(const std::string& dir) {
  for (const char* name : {kRecordingFile, kLogFile}) {
    ::unlink(absl::StrCat(dir, "/", name).c_str());
  }
  ::rmdir(absl::StrCat(dir, "/", kDotnetEventsDir).c_str());  // empty: nothing was collected
  ::rmdir(dir.c_str());
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
  const std::vector<std::string> created = MissingDirectories(out);
  auto run_dir = CreateRunDirectory(out, std::time(nullptr));
  if (!run_dir.ok()) {
    RemoveEmptyDirectories(created);
    return Fail(run_dir.status().message());
  }
  base::RunLog log;
  if (!log.Open(absl::StrCat(*run_dir, "/", kLogFile))) {
    RemoveRunDirectory(*run_dir);
    RemoveEmptyDirectories(created);
    return Fail(absl::StrCat("cannot write to ", *run_dir));
  }
  log.Info(absl::StrCat("profcpu ", kProfcpuVersion, ": ", absl::StrJoin(argv, " ")));

  options.recording_path = absl::StrCat(*run_dir, "/", kRecordingFile);
  options.jit_copy_dir = absl::StrCat(*run_dir, "/", kJitDir);
  options.perf_map_copy_max_bytes = PerfMapCopyCap();
  const std::string dotnet_events_dir = absl::StrCat(*run_dir, "/", kDotnetEventsDir);
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
    if (IsStartupError(error)) {
      // Nothing was sampled: leave no folder behind that looks like a run,
      // nor the -out folders made for it.
      RemoveRunDirectory(*run_dir);
      RemoveEmptyDirectories(created);
      return Fail(error.message());
    }
    return Fail(absl::StrCat(error.message(), " (what was recorded is kept in ", *run_dir,
                             "; profcpu postprocess -dir ", *run_dir, " builds outputs from it)"));
  }
  // Left only if some .NET process streamed its events.
  if (!options.dotnet_events_dir.empty()) ::rmdir(options.dotnet_events_dir.c_str());
  for (const std::string& note : collected->notes) log.Info(note);
  for (const std::string& warning : collected->warnings) log.Warn(warning);
  log.Info(absl::StrCat("collection stopped (", collected->stop_reason, "): ",
                        collected->counters.samples, " samples, ", collected->counters.lost,
                        " lost"));
  if (!options.command.empty()) {
    log.Info(absl::StrCat("command exited with code ", collected->command_exit_code));
  }
  if (collected->counters.samples == 0 &&
      options.profile.mode == collector::ProfileMode::kOffCpu) {
    log.Warn("no off-CPU events: the target did not block while profcpu watched");
  } else if (collected->counters.samples == 0) {
    log.Warn(options.sampler.event.hardware
                 ? absl::StrCat("the '", options.sampler.event.name,
                                "' event produced no samples: this machine's PMU counts but does "
                                "not deliver sampling interrupts (common in VMs); use -event "
                                "cpu-clock")
                 : "no samples: the target did not run on a CPU while profcpu was sampling");
  }
  if (collected->counters.lost > 0) {
    log.Warn(absl::StrCat(collected->counters.lost,
                          " samples were lost because the ring buffers filled; use a larger "
                          "-mmap-pages or a lower -freq"));
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
  flags.Add("pid", "PID", "", "process to profile (a thread id: its whole process)");
  flags.Add("container", "ID", "",
            "profile every process of a container: its id or id prefix (docker/podman ps), "
            "its name (with podman or docker installed), or its cgroup v2 path");
  flags.Add("a", "", "", "profile every process on the machine (per-CPU sampling)");
  flags.Add("duration", "SEC", "30", "how long to sample; 0 = until the process exits or Ctrl-C");
  AddSamplingFlags(&flags);
  absl::Status parsed = flags.Parse(args);
  if (!parsed.ok()) return UsageError(flags, parsed.message());
  if (flags.help_requested()) {
    std::printf("%s", flags.Usage().c_str());
    return kExitOk;
  }
  if (!flags.positionals().empty()) {
    return UsageError(flags, absl::StrCat("unexpected argument '", flags.positionals()[0], "'"));
  }
  collector::CollectionOptions options;
  if (absl::Status s = ReadTargetFlags(flags, &options); !s.ok()) {
    return absl::IsInvalidArgument(s) ? UsageError(flags, s.message()) : Fail(s.message());
  }
  double seconds;
  if (absl::Status s = flags.Seconds("duration", &seconds); !s.ok()) {
    return UsageError(flags, s.message());
  }
  options.duration = absl::Seconds(seconds);
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
  absl::Status parsed = flags.Parse(args);
  if (!parsed.ok()) return UsageError(flags, parsed.message());
  if (flags.help_requested()) {
    std::printf("%s", flags.Usage().c_str());
    return kExitOk;
  }
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
