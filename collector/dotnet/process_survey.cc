#include "collector/dotnet/process_survey.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "collector/dotnet/diagnostics_client.h"
#include "collector/dotnet/runtime_commands.h"
#include "collector/proc/cgroup.h"
#include "collector/proc/proc_reader.h"
#include "collector/proc/process_environment.h"

namespace profcpu::collector::dotnet {

namespace {

// Whether any of the process's open files is one of `paths` (as it sees them).
bool HoldsOpen(pid_t pid, const std::string& proc, const std::vector<std::string>& paths) {
  std::string fd_dir = absl::StrCat(proc, "/", pid, "/fd");
  DIR* dir = ::opendir(fd_dir.c_str());
  if (dir == nullptr) return false;
  bool found = false;
  char target[4096];
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    ssize_t n = ::readlink(absl::StrCat(fd_dir, "/", entry->d_name).c_str(), target,
                           sizeof(target) - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    for (const std::string& path : paths) found |= path == target;
    if (found) break;
  }
  ::closedir(dir);
  return found;
}

}  // namespace

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
    // On means the runtime holds its perf map or jitdump open now: the
    // environment says nothing of maps turned on or off at run time, and
    // the files stay behind after they are turned off.
    std::string dir = env->DotnetPerfMapDirectory();
    uint32_t self = s.namespace_pids.back();
    s.perf_map_on = HoldsOpen(pid, proc, {absl::StrCat(dir, "/perf-", self, ".map"),
                                          absl::StrCat(dir, "/jit-", self, ".dump")});
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
