#include "collector/dotnet/process_survey.h"


#include <algorithm>

#include "absl/strings/str_cat.h"
#include "collector/dotnet/diagnostics_client.h"
#include "collector/dotnet/perfmap_state.h"
#include "collector/dotnet/runtime_commands.h"
#include "collector/proc/cgroup.h"
#include "collector/proc/proc_reader.h"

namespace profcpu::collector::dotnet {

absl::StatusOr<ProcessSummary> SurveyProcess(pid_t pid, bool ask_runtime,
                                             const std::string& proc) {
  ProcessSummary s;
  s.pid = pid;
  auto ns_pids = ReadNamespacePids(pid, proc);
  if (!ns_pids.ok()) return ns_pids.status();
  s.namespace_pids = *ns_pids;
  auto comm = ReadThreadName(pid, pid, proc);
  if (comm.ok()) s.comm = *comm;
  auto cmdline = ReadCommandLine(pid, proc);
  if (cmdline.ok()) s.command_line = *cmdline;
  auto cgroup = ReadProcCgroup(pid, proc);
  if (cgroup.ok()) s.container_id = ContainerIdFromCgroup(*cgroup);

  auto target = FindDiagnosticsTarget(pid, proc);
  if (!target.ok()) {
    if (!absl::IsNotFound(target.status())) s.problem = std::string(target.status().message());
    return s;
  }
  s.is_dotnet = true;
  if (auto state = ReadPerfMapState(pid, proc)) {
    s.perf_map_on = state->perf_map_open || state->jitdump_open;
  }
  if (ask_runtime) {
    auto info = QueryProcessInfo(*target);
    if (info.ok()) {
      s.runtime_version = info->runtime_version;
      s.entry_assembly = info->entry_assembly;
    } else {
      s.problem = std::string(info.status().message());
    }
  }
  return s;
}

}  // namespace profcpu::collector::dotnet
