// `profcpu agent -store URL[,URL...]`: profiles this node window after
// window and delivers every window to the fleet's store (fleet/agent/).
// Flags only: the loop, its defaults and their reasons are fleet/agent's.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collector/collection_options.h"
#include "collector/perf/event_spec.h"
#include "collector/proc/container_resolver.h"
#include "collector/profile_mode.h"
#include "base/status_macros.h"
#include "fleet/agent/agent_defaults.h"
#include "fleet/agent/agent_loop.h"
#include "fleet/store/clickhouse_client.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/version.h"

namespace profcpu::cli {
namespace {

std::atomic<bool> g_agent_stop{false};
std::atomic<int> g_agent_signal{SIGTERM};

void OnAgentStop(int signal_number) {
  g_agent_signal = signal_number;
  g_agent_stop = true;
}

std::string ThisHostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

void AddAgentFlags(FlagSet* flags) {
  flags->Add("store", "URL[,URL...]", "",
             "the HTTP URL of every ClickHouse shard of the store, in the same order on every "
             "node (required); this node writes to one of them, chosen by its name");
  flags->Add("node", "NAME", "", "this node's name in the store (default: the hostname)");
  flags->Add("pid", "PID", "", "profile only this process (default: every process)");
  flags->Add("container", "ID", "",
             "profile only this container: its id, id prefix, name or cgroup v2 path");
  flags->Add("freq", "HZ", absl::StrCat(fleet::kAgentFrequencyHz),
             "samples per second per CPU (a prime below 20: never in step with a periodic task)");
  flags->Add("window", "SEC", absl::StrCat(absl::ToInt64Seconds(fleet::kAgentWindow)),
             "seconds per window: the store sees a window when it ends");
  flags->Add("backend", "NAME", "bpf",
             "bpf: stacks counted in the kernel (flat cost); perf: every sample to user space");
  flags->Add("event", "NAME", "cpu-clock", "sampling event: cpu-clock, task-clock, or cycles where the CPU has a PMU");
  flags->Add("spool", "DIR", "/var/lib/profcpu/spool",
             "where windows wait while the store is down or slow (kept across restarts)");
  flags->Add("spool-mb", "N", absl::StrCat(fleet::kAgentSpoolMegabytes),
             "the spool's cap in MB (fractions allowed); the oldest windows beyond it are lost, "
             "and counted as lost");
  flags->Add("store-timeout", "SEC", "10",
             "give a store request up after this long without an answer; the window waits in the spool");
  flags->Add("work", "DIR", "", "where each window's recording is made (default: $TMPDIR)");
  flags->Add("kubelet-root", "DIR", "/var/lib/kubelet",
             "the kubelet's folder, for pod namespaces (mounted read-only in the DaemonSet)");
}

absl::Status ReadAgentFlags(const FlagSet& flags, fleet::AgentOptions* options) {
  if (flags.String("store").empty()) return absl::InvalidArgumentError("agent needs -store URL");
  PROFCPU_ASSIGN_OR_RETURN(options->store_urls, fleet::SplitStoreUrls(flags.String("store")));
  options->node = flags.IsSet("node") ? flags.String("node") : ThisHostname();
  collector::CollectionOptions& collection = options->collection;
  if (flags.IsSet("pid") && flags.IsSet("container")) {
    return absl::InvalidArgumentError("give only one of -pid and -container");
  }
  if (flags.IsSet("pid")) {
    int64_t pid;
    PROFCPU_RETURN_IF_ERROR(flags.Int("pid", 1, 0x3fffffff, &pid));
    collection.pid = static_cast<pid_t>(pid);
  } else if (flags.IsSet("container")) {
    PROFCPU_ASSIGN_OR_RETURN(collector::ContainerTarget container,
                             collector::ResolveContainer(flags.String("container")));
    collection.cgroup_dir = container.cgroup_dir;
    collection.container_id = container.container_id;
  } else {
    collection.all_processes = true;
  }
  int64_t freq;
  PROFCPU_RETURN_IF_ERROR(flags.Int("freq", 1, collector::KernelMaxSampleRate(), &freq));
  double spool_mb;
  if (!absl::SimpleAtod(flags.String("spool-mb"), &spool_mb) || !(spool_mb >= 0.01) ||
      spool_mb > (1 << 20)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-spool-mb must be a number of MB from 0.01 to 1048576, got '", flags.String("spool-mb"),
        "'"));
  }
  double window, timeout;
  PROFCPU_RETURN_IF_ERROR(flags.Seconds("window", &window));
  PROFCPU_RETURN_IF_ERROR(flags.Seconds("store-timeout", &timeout));
  if (window < 1) return absl::InvalidArgumentError("-window must be at least 1 second");
  if (timeout <= 0) return absl::InvalidArgumentError("-store-timeout must be positive");
  options->window = absl::Seconds(window);
  options->store_limits.timeout = absl::Seconds(timeout);
  options->store_limits.max_answer_bytes = fleet::kAgentMaxAnswerBytes;
  options->spool_dir = flags.String("spool");
  options->spool_cap_bytes = static_cast<uint64_t>(spool_mb * (1 << 20));
  options->work_dir = flags.IsSet("work") ? flags.String("work") : fleet::DefaultAgentWorkDir();
  options->kubelet_root = flags.String("kubelet-root");
  collection.sampler.rate = static_cast<uint64_t>(freq);
  PROFCPU_ASSIGN_OR_RETURN(collection.sampler.event, collector::ParseEventName(flags.String("event")));
  PROFCPU_ASSIGN_OR_RETURN(collection.profile.backend,
                           collector::ParseSamplingBackend(flags.String("backend")));
  fleet::ApplyAgentSamplingDefaults(&collection);
  return collector::ValidateCollectionOptions(collection);
}

}  // namespace

int RunAgent(const std::vector<std::string>& args) {
  FlagSet flags("agent", "profcpu agent -store URL[,URL...] [-pid PID | -container ID] [-node NAME]",
                "Profiles this node (every process, a container or a process) window after window "
                "until stopped,\nnames the frames here (kernel, native, JIT and .NET), labels "
                "each sample (node, container,\ncgroup, pod_uid, pod, namespace, comm, exe, "
                "runtime, build_id) and writes every window to the\nClickHouse store made by "
                "`profcpu fleet init`. While the store is down or slow, windows wait in\nthe "
                "spool on disk and go in order when it returns; none counts twice, and what the "
                "spool's cap\nforces out is counted as lost, in this log and in the store. "
                "SIGTERM or Ctrl-C ends the window\nbeing taken, delivers it and exits. "
                "`profcpu query` draws any slice.");
  AddAgentFlags(&flags);
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  if (!flags.positionals().empty()) {
    return UsageError(flags, absl::StrCat("unexpected argument '", flags.positionals()[0], "'"));
  }
  fleet::AgentOptions options;
  if (absl::Status s = ReadAgentFlags(flags, &options); !s.ok()) {
    return absl::IsInvalidArgument(s) ? UsageError(flags, s.message()) : Fail(s.message());
  }
  options.version = kProfcpuVersion;
  options.collection.profcpu_version = kProfcpuVersion;
  options.collection.command_line = absl::StrCat("profcpu agent ", absl::StrJoin(args, " "));
  options.stop_requested = options.collection.stop_requested = &g_agent_stop;
  options.stop_signal = options.collection.stop_signal = &g_agent_signal;
  struct sigaction action = {};
  action.sa_handler = OnAgentStop;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  absl::StatusOr<fleet::AgentTotals> totals = fleet::RunAgent(options);
  if (!totals.ok()) return Fail(totals.status().message());
  return totals->windows_lost > 0 ? kExitFailure : kExitOk;
}

}  // namespace profcpu::cli
