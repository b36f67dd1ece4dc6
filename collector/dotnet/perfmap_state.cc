#include "collector/dotnet/perfmap_state.h"

#include <dirent.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "collector/proc/proc_reader.h"
#include "collector/proc/process_environment.h"

namespace profcpu::collector::dotnet {

std::optional<PerfMapState> ReadPerfMapState(pid_t pid, const std::string& proc) {
  auto env = ProcessEnvironment::Read(pid, proc);
  auto ns_pids = ReadNamespacePids(pid, proc);
  if (!env.ok() || !ns_pids.ok()) return std::nullopt;
  // The runtime names its files after the pid it sees, in its own mount
  // namespace: compare with the fd links as it sees them.
  std::string dir = env->DotnetPerfMapDirectory();
  std::string map = absl::StrCat(dir, "/perf-", ns_pids->back(), ".map");
  std::string dump = absl::StrCat(dir, "/jit-", ns_pids->back(), ".dump");
  std::string fd_dir = absl::StrCat(proc, "/", pid, "/fd");
  DIR* fds = ::opendir(fd_dir.c_str());
  if (fds == nullptr) return std::nullopt;
  PerfMapState state;
  state.configured = env->DotnetPerfMapEnabled();
  char target[4096];
  while (dirent* entry = ::readdir(fds)) {
    if (entry->d_name[0] == '.') continue;
    ssize_t n = ::readlink(absl::StrCat(fd_dir, "/", entry->d_name).c_str(), target,
                           sizeof(target) - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    state.perf_map_open |= map == target;
    state.jitdump_open |= dump == target;
  }
  ::closedir(fds);
  return state;
}

}  // namespace profcpu::collector::dotnet
