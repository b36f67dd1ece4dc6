#include "collector/proc/container_resolver.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file_io.h"
#include "collector/proc/cgroup.h"
#include "collector/proc/proc_reader.h"

namespace profcpu::collector {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool LooksLikeIdPrefix(absl::string_view s) {
  if (s.size() < 3 || s.size() > 64) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The full container id a name stands for, asking the container engines.
std::string InspectName(absl::string_view name) {
  // Names are [a-zA-Z0-9][a-zA-Z0-9_.-]*: nothing a shell would interpret.
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return "";
    }
  }
  for (const char* engine : {"podman", "docker"}) {
    std::string command =
        absl::StrCat(engine, " inspect --format '{{.Id}}' ", name, " 2>/dev/null");
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) continue;
    char buffer[256] = {};
    size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, pipe);
    int status = ::pclose(pipe);
    std::string id(absl::StripAsciiWhitespace(absl::string_view(buffer, n)));
    if (status == 0 && id.size() == 64) return id;
  }
  return "";
}

}  // namespace

std::string ContainerCgroupPath(absl::string_view process_cgroup, absl::string_view container_id) {
  std::vector<absl::string_view> parts = absl::StrSplit(process_cgroup, '/', absl::SkipEmpty());
  for (size_t i = 0; i < parts.size(); ++i) {
    if (absl::StrContains(parts[i], container_id)) {
      return absl::StrCat("/", absl::StrJoin(parts.begin(), parts.begin() + i + 1, "/"));
    }
  }
  return "";
}

absl::StatusOr<ContainerTarget> ResolveContainer(absl::string_view what, const std::string& proc) {
  auto mount = CgroupV2Mount();
  if (!mount.ok()) return mount.status();
  ContainerTarget target;
  if (absl::StartsWith(what, "/")) {
    std::string path(what);
    if (!absl::StartsWith(path, *mount + "/")) path = *mount + path;
    if (!IsDirectory(path)) {
      return absl::NotFoundError(absl::StrCat("no cgroup ", what, " under ", *mount));
    }
    target.cgroup_dir = path;
    return target;
  }
  std::string wanted = absl::AsciiStrToLower(what);
  if (!LooksLikeIdPrefix(wanted)) {
    wanted = InspectName(what);
    if (wanted.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "no container '", what, "': give its id (or a unique prefix of it, as docker ps and "
          "podman ps show), its name (needs podman or docker here), or its cgroup path"));
    }
  }
  // Find the processes whose cgroup names a matching id.
  std::set<std::string> ids;
  std::string cgroup_of_match;
  for (pid_t pid : ListProcesses(proc)) {
    auto text = ReadProcCgroup(pid, proc);
    if (!text.ok()) continue;
    std::string id = ContainerIdFromCgroup(*text);
    if (id.empty() || !absl::StartsWith(id, wanted)) continue;
    if (ids.insert(id).second) cgroup_of_match = CgroupV2Path(*text);
  }
  if (ids.empty()) {
    return absl::NotFoundError(absl::StrCat("no running container with id ", what,
                                            " (no process's cgroup names it)"));
  }
  if (ids.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("container id prefix ", what,
                                                   " is ambiguous: ", absl::StrJoin(ids, ", ")));
  }
  target.container_id = *ids.begin();
  std::string path = ContainerCgroupPath(cgroup_of_match, target.container_id);
  if (path.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "container ", target.container_id,
        " is not in its own cgroup v2 (is the host using cgroup v1 for it?)"));
  }
  target.cgroup_dir = *mount + path;
  return target;
}

std::vector<pid_t> CgroupProcesses(const std::string& cgroup_dir) {
  std::vector<pid_t> pids;
  std::vector<std::string> pending = {cgroup_dir};
  // Containers nest a few levels at most; the bound keeps a hostile tree finite.
  for (size_t visited = 0; !pending.empty() && visited < 10000; ++visited) {
    std::string dir = pending.back();
    pending.pop_back();
    auto procs = base::ReadFileBounded(dir + "/cgroup.procs", 16 << 20, /*truncate_ok=*/true);
    if (procs.ok()) {
      for (absl::string_view line : absl::StrSplit(*procs, '\n', absl::SkipEmpty())) {
        int pid;
        if (absl::SimpleAtoi(line, &pid) && pid > 0) pids.push_back(pid);
      }
    }
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) continue;
    while (dirent* entry = ::readdir(d)) {
      if (entry->d_type == DT_DIR && entry->d_name[0] != '.') {
        pending.push_back(absl::StrCat(dir, "/", entry->d_name));
      }
    }
    ::closedir(d);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

bool CgroupPopulated(const std::string& cgroup_dir) {
  auto events = base::ReadFileBounded(cgroup_dir + "/cgroup.events", 4096);
  if (!events.ok()) return false;  // the cgroup is gone
  return absl::StrContains(*events, "populated 1");
}

}  // namespace profcpu::collector
