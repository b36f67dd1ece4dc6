#include "collector/collection.h"

#include <signal.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/file_io.h"
#include "base/jit_mapping.h"
#include "base/status_macros.h"
#include "collector/collection_target.h"
#include "collector/dotnet/dotnet_events_session.h"
#include "collector/dotnet/perfmap_session.h"
#include "collector/proc/container_resolver.h"
#include "collector/proc/proc_reader.h"
#include "collector/proc/process_environment.h"
#include "collector/process_roots.h"
#include "collector/record_orderer.h"
#include "recording/recording_writer.h"

namespace profcpu::collector {
namespace {

constexpr int kPollIntervalMs = 100;
constexpr uint64_t kFlushIntervalNs = 1'000'000'000;
constexpr uint64_t kProgressIntervalNs = 250'000'000;
// How long a started command may take to exit after profcpu forwards a signal.
constexpr uint64_t kCommandGraceNs = 2'000'000'000;
// How often the .NET perf-map session looks at the processes it watches.
constexpr uint64_t kPerfMapPollIntervalNs = 1'000'000'000;
// A started .NET command's events begin once its diagnostics socket shows:
// looked for more often than perf maps, so few of its first events are lost.
constexpr uint64_t kDotnetEventsPollIntervalNs = 200'000'000;
// How often perf maps are looked for and their growth copied: a process that
// writes its map and removes it within one interval is missed.
constexpr uint64_t kPerfMapTailIntervalNs = 100'000'000;

int64_t RealtimeNowNs() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string ReadTrimmed(const char* path) {
  auto text = base::ReadFileBounded(path, 4096);
  return text.ok() ? std::string(absl::StripAsciiWhitespace(*text)) : "";
}

recording::Header MakeHeader(const CollectionOptions& options, const SamplerOptions& sampler,
                             const std::string& target, uint64_t start_ns) {
  recording::Header h;
  h.profcpu_version = options.profcpu_version;
  h.event_name = sampler.event.name;
  h.event_type = sampler.event.type;
  h.event_config = sampler.event.config;
  h.frequency_mode = options.sampler.frequency_mode;
  h.sample_rate = options.sampler.rate;
  h.clock_id = CLOCK_MONOTONIC;
  h.start_time_ns = start_ns;
  h.start_realtime_ns = RealtimeNowNs();
  h.cpu_count = static_cast<uint32_t>(::sysconf(_SC_NPROCESSORS_CONF));
  h.callgraph = "fp";
  if (sampler.dwarf_stack_size > 0) {
    h.callgraph = "dwarf";
    h.user_regs_mask = kDwarfRegsMask;
    h.user_stack_size = sampler.dwarf_stack_size;
  } else if (sampler.leaf_stack_size > 0) {
    h.callgraph = "fp+cfi";
    h.user_regs_mask = kLeafRegsMask;
    h.user_stack_size = sampler.leaf_stack_size;
  }
  // Off-CPU switch-outs' copies (BPF), whose size is the BPF program's.
  DescribeLeafCopy(options.profile, &h);
  utsname uts;
  if (::uname(&uts) == 0) {
    h.hostname = uts.nodename;
    h.kernel_release = uts.release;
  }
  h.boot_id = ReadTrimmed("/proc/sys/kernel/random/boot_id");
  h.target = target;
  h.command_line = options.command_line;
  h.mode = std::string(ProfileModeName(options.profile.mode));
  h.backend = std::string(SamplingBackendName(options.profile.backend));
  if (options.profile.backend == SamplingBackend::kBpf &&
      options.profile.mode != ProfileMode::kOffCpu && !options.profile.timestamps) {
    h.counted_interval_ns = kCountIntervalNs;
  }
  return h;
}

// What the collector knows about a process: pids by namespace and command line.
recording::ProcessInfo DescribeProcess(pid_t pid, uint64_t time_ns) {
  recording::ProcessInfo info;
  info.time_ns = time_ns;
  info.pid = static_cast<uint32_t>(pid);
  auto ns_pids = ReadNamespacePids(pid);
  info.namespace_pids = ns_pids.ok() ? *ns_pids : std::vector<uint32_t>{info.pid};
  auto cmdline = ReadCommandLine(pid);
  if (cmdline.ok()) info.command_line = *cmdline;
  auto env = ProcessEnvironment::Read(pid);
  if (env.ok()) info.jit_directory = env->DotnetPerfMapDirectory();
  return info;
}

// Keeps each executable file a process maps open from the moment profcpu
// sees the mapping (RootDir::Keep): symbolization runs after collection,
// when a container that exited has lost its mounts, and a deploy may have
// replaced the file. A file deleted since it was mapped is reached through
// /proc/PID/map_files (needs CAP_SYS_ADMIN; without it, it stays unnamed).
void KeepMappedFile(const recording::Mmap& mmap, ProcessRoots* roots) {
  if (mmap.filename.empty() || mmap.filename[0] != '/' ||
      absl::StartsWith(mmap.filename, "/memfd:") || absl::StartsWith(mmap.filename, "//")) {
    return;  // anonymous memory, JIT code, [vdso] and friends: no file
  }
  std::shared_ptr<base::RootDir> root = roots->Add(static_cast<pid_t>(mmap.pid));
  if (root == nullptr) return;
  absl::string_view path = mmap.filename;
  std::string map_files;
  if (absl::ConsumeSuffix(&path, " (deleted)")) {
    map_files = absl::StrFormat("/proc/%d/map_files/%x-%x", mmap.pid, mmap.start,
                                mmap.start + mmap.length);
  }
  (void)root->Keep(std::string(path), map_files);
}

// Starts copying the perf map of a process seen mapping JIT code, named as
// the process names it: <its JIT directory>/perf-<the pid it sees>.map.
void TailPerfMapOf(const recording::Mmap& mmap, const CollectionResult& result,
                   ProcessRoots* roots, PerfMapTailer* tailer) {
  if (tailer == nullptr || !base::LooksLikeJitMapping(mmap.filename) ||
      tailer->Knows(mmap.pid)) {
    return;
  }
  auto described = std::find_if(result.processes.rbegin(), result.processes.rend(),
                                [&](const recording::ProcessInfo& p) { return p.pid == mmap.pid; });
  const recording::ProcessInfo info = described != result.processes.rend()
                                          ? *described
                                          : DescribeProcess(static_cast<pid_t>(mmap.pid), 0);
  const uint32_t seen_as = info.namespace_pids.empty() ? mmap.pid : info.namespace_pids.back();
  const std::string dir = info.jit_directory.empty() ? "/tmp" : info.jit_directory;
  // The root as it is now: a command may have entered a mount namespace of
  // its own (with its own /tmp) since its root was first opened. None when
  // the process has exited already: the tailer cannot say it looked while it
  // ran, and a map it left is copied after collection as before.
  tailer->Watch(mmap.pid, roots->Current(static_cast<pid_t>(mmap.pid)),
                absl::StrCat(dir, "/perf-", seen_as, ".map"), MonotonicNowNs());
}

// The state of a process that predates collection, as records: thread names,
// executable mappings, and how it sees itself.
void SynthesizeExistingProcess(pid_t pid, uint64_t time_ns, RecordOrderer* orderer,
                               CollectionResult* result, ProcessRoots* roots,
                               PerfMapTailer* tailer) {
  result->processes.push_back(DescribeProcess(pid, time_ns));
  orderer->Add(result->processes.back());
  std::vector<std::string>* warnings = &result->warnings;
  auto tids = ListThreads(pid);
  if (tids.ok()) {
    for (pid_t tid : *tids) {
      auto name = ReadThreadName(pid, tid);
      if (!name.ok()) continue;
      recording::Comm comm;
      comm.time_ns = time_ns;
      comm.pid = static_cast<uint32_t>(pid);
      comm.tid = static_cast<uint32_t>(tid);
      comm.comm = *name;
      comm.synthesized = true;
      orderer->Add(std::move(comm));
    }
  }
  auto maps = ReadProcMaps(pid, time_ns);
  if (!maps.ok()) {
    warnings->push_back(absl::StrCat("cannot read the mappings of process ", pid, ": ",
                                     maps.status().message(),
                                     "; its native frames will be [unknown] (needs "
                                     "CAP_SYS_PTRACE for another user's process)"));
    return;
  }
  for (recording::Mmap& m : *maps) {
    KeepMappedFile(m, roots);
    TailPerfMapOf(m, *result, roots, tailer);
    orderer->Add(std::move(m));
  }
}

}  // namespace

uint64_t MonotonicNowNs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

absl::StatusOr<CollectionResult> Collect(const CollectionOptions& options) {
  CollectionResult result;
  TargetSpec spec;
  spec.pid = options.pid;
  spec.command = options.command;
  spec.cgroup_dir = options.cgroup_dir;
  spec.container_id = options.container_id;
  spec.all_processes = options.all_processes;
  // BPF first: when it cannot run here, fail before starting anything.
  SamplerOptions sampler_options = options.sampler;
  sampler_options.enable_on_exec = !spec.command.empty();
  // -backend bpf: perf events only trigger the BPF program, which counts
  // stacks in the kernel and copies no user stack for on-CPU samples.
  if (options.profile.backend == SamplingBackend::kBpf) sampler_options.leaf_stack_size = 0;
  PROFCPU_ASSIGN_OR_RETURN(std::unique_ptr<BpfCollection> bpf,
                           BpfCollection::Create(
                               options.profile, OffCpuScope{spec.cgroup_dir, spec.all_processes},
                               &sampler_options));
  PROFCPU_ASSIGN_OR_RETURN(std::unique_ptr<CollectionTarget> target,
                           CollectionTarget::Create(spec));
  const bool command_mode = target->starts_command();
  result.target_pid = target->main_pid();
  const pid_t pid = result.target_pid;
  if (target->given_thread() > 0) {
    result.notes.push_back(absl::StrCat(
        "pid ", target->given_thread(), " is a thread of process ", pid,
        ": profiling the whole process, every thread (postprocess -tid ",
        target->given_thread(), " keeps that thread's samples only)"));
  }
  // Before sampling, so JIT code compiled from the first sample on is named.
  std::optional<dotnet::PerfMapSession> perfmaps;
  if (options.manage_dotnet_perfmaps && options.log != nullptr) {
    perfmaps.emplace(options.log);
    // The target's processes as they stand now (a started command is
    // watched once it runs).
    for (pid_t process : target->ExistingProcesses()) perfmaps->Watch(process);
  }
  std::optional<dotnet::DotnetEventsSession> dotnet_events;
  if (options.dotnet_events && !options.dotnet_events_dir.empty() && options.log != nullptr) {
    dotnet_events.emplace(options.dotnet_events_dir, options.dotnet_events_max_bytes,
                          options.log);
    for (pid_t process : target->ExistingProcesses()) dotnet_events->Watch(process);
  }
  uint64_t last_perfmap_poll = 0;
  uint64_t last_dotnet_events_poll = 0;
  std::vector<pid_t> new_processes;
  uint64_t last_perfmap_tail = 0;

  PROFCPU_ASSIGN_OR_RETURN(auto writer, recording::RecordingWriter::Create(options.recording_path));
  RecordOrderer orderer([&](const recording::Record& record) {
    return writer->Write(record);
  });

  ProcessRoots roots;
  std::optional<PerfMapTailer> tailer;
  if (!options.jit_copy_dir.empty()) {
    PerfMapTailer::Limits limits;
    if (options.perf_map_copy_max_bytes > 0) {
      limits.max_file_bytes = options.perf_map_copy_max_bytes;
    }
    tailer.emplace(options.jit_copy_dir, limits);
  }
  PerfMapTailer* const tail = tailer ? &*tailer : nullptr;
  PROFCPU_ASSIGN_OR_RETURN(
      auto sampler, Sampler::Create(sampler_options, [&](recording::Record&& record) {
        if (auto* mmap = std::get_if<recording::Mmap>(&record)) {
          KeepMappedFile(*mmap, &roots);
          TailPerfMapOf(*mmap, result, &roots, tail);
        }
        if (auto* fork = std::get_if<recording::Fork>(&record); fork && fork->pid != fork->ppid) {
          // A new process: remember how to reach its files while it lives.
          if (!roots.Contains(static_cast<pid_t>(fork->pid))) {
            roots.Add(static_cast<pid_t>(fork->pid));
            result.processes.push_back(
                DescribeProcess(static_cast<pid_t>(fork->pid), fork->time_ns));
            orderer.Add(result.processes.back());
            // Started during collection: looked at from the loop, not here
            // (starting a session talks to the runtime).
            if (dotnet_events) new_processes.push_back(static_cast<pid_t>(fork->pid));
          }
        }
        orderer.Add(std::move(record));
      }));

  result.start_time_ns = MonotonicNowNs();
  PROFCPU_RETURN_IF_ERROR(writer->Write(
      MakeHeader(options, sampler_options, target->Description(), result.start_time_ns)));

  if (pid > 0 && roots.Add(pid) == nullptr) {
    const absl::Status& why = roots.last_error();
    // ptrace access mode (kernel/ptrace.c): another uid, or a process holding
    // capabilities profcpu lacks, as every app container does.
    result.warnings.push_back(absl::StrCat(
        "cannot open the root of process ", pid, " (", why.message(),
        "); its files cannot be read and its native and JIT frames stay unnamed",
        absl::IsPermissionDenied(why)
            ? ": reading a process that runs as another user or holds capabilities profcpu "
              "lacks needs CAP_SYS_PTRACE"
            : ""));
  }
  PROFCPU_RETURN_IF_ERROR(target->Attach(sampler.get()));
  if (command_mode) {
    result.processes.push_back(DescribeProcess(pid, result.start_time_ns));
    // Not exec'd yet: /proc still shows profcpu's own command line.
    result.processes.back().command_line = absl::StrJoin(spec.command, " ");
    orderer.Add(result.processes.back());
    if (bpf) PROFCPU_RETURN_IF_ERROR(bpf->TrackProcess(pid, MonotonicNowNs()));
    PROFCPU_RETURN_IF_ERROR(target->Start());
    // A started command becomes a .NET runtime some moments after it starts.
    if (perfmaps) perfmaps->Watch(pid);
    if (dotnet_events) dotnet_events->Watch(pid);
  } else {
    if (bpf) {
      PROFCPU_RETURN_IF_ERROR(bpf->TrackProcess(pid, result.start_time_ns));
      // Without it the run is still good, only blind to stays begun earlier.
      absl::StatusOr<uint64_t> blocked = bpf->SnapshotBlockedThreads(&orderer);
      if (!blocked.ok()) {
        result.warnings.push_back(absl::StrCat(
            "threads blocked already when collection began count only from their next block: ",
            blocked.status().message()));
      } else if (*blocked > 0) {
        result.notes.push_back(absl::StrCat(*blocked, " threads were already blocked when "
                                            "collection began: their time counts from then"));
      }
    }
    // Stamped with the start time, before any sample, so replay sees them first.
    for (pid_t existing : target->ExistingProcesses()) {
      roots.Add(existing);
      SynthesizeExistingProcess(existing, result.start_time_ns, &orderer, &result, &roots,
                                tail);
    }
  }

  uint64_t last_flush = result.start_time_ns;
  uint64_t last_progress = 0;
  const uint64_t duration_ns = static_cast<uint64_t>(absl::ToInt64Nanoseconds(options.duration));
  uint64_t forwarded_signal_at = 0;
  while (true) {
    sampler->Wait(kPollIntervalMs);
    sampler->Drain();
    if (bpf) PROFCPU_RETURN_IF_ERROR(bpf->Poll(MonotonicNowNs(), /*final=*/false, &orderer));
    PROFCPU_RETURN_IF_ERROR(orderer.EndRound());
    uint64_t now = MonotonicNowNs();
    uint64_t elapsed = now - result.start_time_ns;
    if (now - last_flush >= kFlushIntervalNs) {
      PROFCPU_RETURN_IF_ERROR(writer->Flush());
      last_flush = now;
    }
    if (options.on_progress && now - last_progress >= kProgressIntervalNs) {
      options.on_progress({absl::Nanoseconds(static_cast<int64_t>(elapsed)), options.duration,
                           sampler->counters().samples + (bpf ? bpf->samples() : 0),
                           sampler->counters().lost + (bpf ? bpf->lost() : 0), pid});
      last_progress = now;
    }
    if (perfmaps && now - last_perfmap_poll >= kPerfMapPollIntervalNs) {
      perfmaps->Poll();
      last_perfmap_poll = now;
    }
    if (dotnet_events) {
      for (pid_t started : new_processes) dotnet_events->Watch(started);
      new_processes.clear();
    }
    if (dotnet_events && now - last_dotnet_events_poll >= kDotnetEventsPollIntervalNs) {
      dotnet_events->Poll();
      last_dotnet_events_poll = now;
    }
    if (tail != nullptr && now - last_perfmap_tail >= kPerfMapTailIntervalNs) {
      tail->Tick();
      last_perfmap_tail = now;
    }
    if (auto ended = target->Ended(&result.command_exit_code)) {
      result.stop_reason = *ended;
      break;
    }
    if (duration_ns > 0 && elapsed >= duration_ns) {
      result.stop_reason = "duration";
      break;
    }
    if (options.stop_requested != nullptr && options.stop_requested->load()) {
      if (command_mode && forwarded_signal_at == 0) {
        // Let the command end on its own terms, as it would without profcpu,
        // and keep sampling while it shuts down.
        target->ForwardSignal(options.stop_signal ? options.stop_signal->load() : SIGTERM);
        forwarded_signal_at = now;
      }
      if (command_mode && now - forwarded_signal_at < kCommandGraceNs) continue;
      result.stop_reason = "signal";
      break;
    }
  }

  sampler->DisableAll();
  if (perfmaps) perfmaps->Finish();  // the files stay for symbolization
  if (dotnet_events) dotnet_events->Finish();
  sampler->Drain();
  if (bpf) PROFCPU_RETURN_IF_ERROR(bpf->Poll(MonotonicNowNs(), /*final=*/true, &orderer));
  PROFCPU_RETURN_IF_ERROR(orderer.Flush());
  if (tail != nullptr) {
    // After the last mmap record: every JIT process is watched by now.
    result.perf_maps = tail->Finish();
    for (std::string& w : tail->TakeWarnings()) result.warnings.push_back(std::move(w));
    for (const TailedPerfMap& map : result.perf_maps) {
      result.notes.push_back(DescribeTailedPerfMap(map));
    }
  }
  result.end_time_ns = MonotonicNowNs();
  result.roots = roots.by_pid();
  result.counters = sampler->counters();
  if (bpf) {
    result.counters.samples += bpf->samples();
    result.counters.lost += bpf->lost();
    for (std::string& w : bpf->warnings()) result.warnings.push_back(std::move(w));
  }
  result.kernel_stacks = sampler->kernel_stacks();
  for (const std::string& w : sampler->warnings()) result.warnings.push_back(w);
  recording::Finish finish;
  finish.end_time_ns = result.end_time_ns;
  finish.samples = result.counters.samples;
  finish.lost = result.counters.lost;
  finish.stop_reason = result.stop_reason;
  PROFCPU_RETURN_IF_ERROR(writer->Write(finish));
  PROFCPU_RETURN_IF_ERROR(writer->Close());
  if (options.on_progress) {
    options.on_progress({absl::Nanoseconds(static_cast<int64_t>(result.end_time_ns -
                                                                result.start_time_ns)),
                         options.duration, result.counters.samples, result.counters.lost, pid});
  }
  return result;
}

}  // namespace profcpu::collector
