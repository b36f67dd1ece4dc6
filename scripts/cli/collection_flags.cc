#include "scripts/cli/collection_flags.h"

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "collector/callgraph_choice.h"
#include "collector/perf/event_spec.h"
#include "collector/proc/container_resolver.h"
#include "collector/profile_mode.h"
#include "scripts/cli/output_flags.h"
#include "scripts/cli/symbol_flags.h"

namespace profcpu::cli {

void AddTargetFlags(FlagSet* flags) {
  flags->Add("pid", "PID", "", "process to profile (a thread id: its whole process)");
  flags->Add("container", "ID", "",
             "profile every process of a container: its id or id prefix (docker/podman ps), "
             "its name (with podman or docker installed), or its cgroup v2 path");
  flags->Add("a", "", "", "profile every process on the machine (per-CPU sampling)");
  flags->Add("duration", "SEC", "30",
             "how long to sample; 0 = until the process exits or Ctrl-C");
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
  double seconds;
  PROFCPU_RETURN_IF_ERROR(flags.Seconds("duration", &seconds));
  options->duration = absl::Seconds(seconds);
  return absl::OkStatus();
}

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
  options->sampler.rate = static_cast<uint64_t>(freq);
  options->sampler.ring_buffer_pages = static_cast<size_t>(pages);
  PROFCPU_RETURN_IF_ERROR(ReadCallgraphFlag(flags, &options->sampler));
  const bool bytes_given = flags.String("callgraph").find(',') != std::string::npos;
  for (uint32_t* copy : {&options->sampler.leaf_stack_size, &options->sampler.dwarf_stack_size}) {
    PROFCPU_ASSIGN_OR_RETURN(std::string note,
                             collector::FitStackCopyToRing(options->sampler.ring_buffer_pages,
                                                           bytes_given, copy));
    if (!note.empty()) std::fprintf(stderr, "profcpu: warning: %s\n", note.c_str());
  }
  // -callgraph fp+cfi: BPF off-CPU switch-outs carry the user registers and
  // a stack copy for leaf repair, as perf samples do.
  options->profile.leaf_copy = options->sampler.leaf_stack_size > 0;
  PROFCPU_ASSIGN_OR_RETURN(options->sampler.event,
                           collector::ParseEventName(flags.String("event")));
  PROFCPU_ASSIGN_OR_RETURN(options->profile.mode,
                           collector::ParseProfileMode(flags.String("mode")));
  PROFCPU_ASSIGN_OR_RETURN(options->profile.backend,
                           collector::ParseSamplingBackend(flags.String("backend")));
  options->profile.timestamps = flags.Bool("timestamps");
  return collector::ValidateCollectionOptions(*options);
}

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

}  // namespace profcpu::cli
