#include "collector/dotnet/process_survey.h"

#include <dirent.h>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "collector/dotnet/diagnostics_client.h"
#include "collector/dotnet/runtime_commands.h"
#include "collector/proc/cgroup.h"
#include "collector/proc/proc_reader.h"
#include "collector/proc/process_environment.h"

namespace profcpu::collector::dotnet {

std::vector<pid_t> ListPids(const std::string& proc) {
  std::vector<pid_t> pids;
  DIR* dir = ::opendir(proc.c_str());
  if (dir == nullptr) return pids;
  while (dirent* entry = ::readdir(dir)) {
    int pid;
    if (absl::SimpleAtoi(entry->d_name, &pid) && pid > 0) pids.push_back(pid);
  }
  ::closedir(dir);
  std::sort(pids.begin(), pids.end());
  return pids;
}

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
  auto env = ProcessEnvironment::Read(pid, proc);
  if (env.ok()) {
    auto enabled = env->DotnetPerfMapEnabled();
    bool on = enabled.has_value() && *enabled != "0";
    if (!on) {
      // Perf maps turned on at run time leave their file behind.
      std::string map = absl::StrCat(env->DotnetPerfMapDirectory(), "/perf-",
                                     s.namespace_pids.back(), ".map");
      on = target->root->OpenPath(map).ok();
    }
    s.perf_map_on = on;
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
