#include "fleet/agent/process_labels.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file_io.h"
#include "base/rooted_open.h"
#include "collector/proc/cgroup.h"
#include "collector/proc/process_environment.h"
#include "symbolize/elf_symbols.h"

namespace profcpu::fleet {
namespace {

// /proc/PID/maps of a .NET process is a few hundred KB; the cap only keeps a
// runaway one (a JVM with a mapping per class) from costing memory.
constexpr size_t kMaxMapsBytes = size_t{8} << 20;
constexpr size_t kMaxSmallFileBytes = 4096;  // stat, comm, a namespace file
constexpr size_t kMaxProjectedVolumes = 64;
constexpr absl::string_view kServiceAccountNamespace =
    "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

bool IsUuid(absl::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !absl::ascii_isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// A Kubernetes namespace name (an RFC 1123 label).
bool IsNamespaceName(absl::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '-';
  });
}

// A host name as a pod gets it (its name, an RFC 1123 subdomain; the kubelet
// cuts it to 63 characters). Anything else is not a pod's name.
bool IsHostName(absl::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  });
}

// "8.0.11", "9.0.0-preview.7.24405.7": a version folder as the .NET
// installers name it.
bool IsVersion(absl::string_view s) {
  if (s.empty() || s.size() > 64 || !absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+';
  });
}

std::string ReadSmallFile(const std::string& path) {
  absl::StatusOr<std::string> text =
      base::ReadFileBounded(path, kMaxSmallFileBytes, /*truncate_ok=*/true);
  return text.ok() ? std::move(*text) : std::string();
}

// The target of a /proc link, without the " (deleted)" the kernel appends
// for a replaced file; "" when unreadable.
std::string ReadLink(const std::string& path) {
  char buffer[PATH_MAX];
  const ssize_t length = ::readlink(path.c_str(), buffer, sizeof(buffer));
  if (length <= 0 || static_cast<size_t>(length) >= sizeof(buffer)) return "";
  absl::string_view target(buffer, static_cast<size_t>(length));
  absl::ConsumeSuffix(&target, " (deleted)");
  return std::string(target);
}

// The GNU build-id of `path` inside the process's root, in hex. Only the ELF
// headers and notes are read (no symbol table), with the symbolizer's own
// bounded reader.
std::string BuildIdInside(const base::RootDir& root, const std::string& path) {
  absl::StatusOr<base::UniqueFd> fd = root.OpenFile(path);
  if (!fd.ok()) return "";
  struct stat st;
  if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  symbolize::ElfSymbolLimits headers_only;
  headers_only.max_symbols = 0;
  auto elf = symbolize::ElfSymbols::FromFd(fd->get(), path, headers_only);
  if (!elf.ok()) return "";
  return absl::BytesToHexString((*elf)->build_id());
}

// The namespace the kubelet wrote into the pod's service-account token
// volume (kube-api-access-*/namespace), read without leaving that folder.
std::string NamespaceFromKubelet(const std::string& kubelet_pods, const std::string& pod_uid) {
  auto volumes = base::RootDir::Open(
      absl::StrCat(kubelet_pods, "/", pod_uid, "/volumes/kubernetes.io~projected"));
  if (!volumes.ok()) return "";
  auto names = (*volumes)->ListDirectory(".", kMaxProjectedVolumes);
  if (!names.ok()) return "";
  std::sort(names->begin(), names->end());  // the same answer on every read
  for (const std::string& name : *names) {
    auto text = (*volumes)->ReadFile(absl::StrCat(name, "/namespace"), kMaxSmallFileBytes);
    if (!text.ok()) continue;
    absl::string_view value = absl::StripAsciiWhitespace(*text);
    if (IsNamespaceName(value)) return std::string(value);
  }
  return "";
}

}  // namespace

std::string DefaultNodeName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

std::string FindCgroupNamespaceRoot(const std::string& proc, const std::string& cgroup_mount,
                                    size_t max_directories) {
  const std::string own = ReadLink(proc + "/self/ns/cgroup");
  if (own.empty() || own == ReadLink(proc + "/1/ns/cgroup")) return "";
  const std::string pid = absl::StrCat(::getpid());
  // Breadth first: the agent's container sits a few levels down.
  std::vector<std::string> queue = {""};
  for (size_t next = 0; next < queue.size() && next < max_directories; ++next) {
    const std::string relative = queue[next];
    const std::string dir = cgroup_mount + relative;
    auto procs = base::ReadFileBounded(dir + "/cgroup.procs", size_t{1} << 20,
                                       /*truncate_ok=*/true);
    if (procs.ok()) {
      for (absl::string_view line : absl::StrSplit(*procs, '\n')) {
        if (line == pid) return relative.empty() ? "/" : relative;
      }
    }
    std::error_code error;
    for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
         it.increment(error)) {
      if (queue.size() >= max_directories) break;
      if (it->is_directory(error) && !it->is_symlink(error)) {
        queue.push_back(absl::StrCat(relative, "/", it->path().filename().string()));
      }
    }
  }
  return "";
}

std::string ResolveCgroupPath(absl::string_view namespace_root, absl::string_view path) {
  if (path.empty()) return "";  // no cgroup v2 line: nothing to resolve
  if (namespace_root.empty() && !absl::StartsWith(path, "/..")) return std::string(path);
  std::vector<absl::string_view> parts;
  for (absl::string_view half : {namespace_root, path}) {
    for (absl::string_view part : absl::StrSplit(half, '/', absl::SkipEmpty())) {
      if (part == ".") continue;
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();  // above the root: clamped
        continue;
      }
      parts.push_back(part);
    }
  }
  return parts.empty() ? "/" : absl::StrCat("/", absl::StrJoin(parts, "/"));
}

std::string PodUidFromCgroup(absl::string_view cgroup_path) {
  // "kubepods" may be above a private cgroup namespace's root ("/../pod<uid>/...").
  if (!absl::StrContains(cgroup_path, "kubepods") && !absl::StartsWith(cgroup_path, "/..")) {
    return "";
  }
  for (absl::string_view part : absl::StrSplit(cgroup_path, '/', absl::SkipEmpty())) {
    absl::ConsumeSuffix(&part, ".slice");
    // "kubepods-burstable-pod<uid>" (systemd driver, '_' for '-') or
    // "pod<uid>" (cgroupfs driver). A uid holds no 'p' or 'o': the last
    // "pod" is the one before it.
    const size_t at = part.rfind("pod");
    if (at == absl::string_view::npos || (at > 0 && part[at - 1] != '-')) continue;
    std::string uid = absl::StrReplaceAll(part.substr(at + 3), {{"_", "-"}});
    if (IsUuid(uid)) return uid;
  }
  return "";
}

std::string DotnetRuntimeFromMaps(absl::string_view maps_text) {
  std::string runtime;
  for (absl::string_view line : absl::StrSplit(maps_text, '\n')) {
    const size_t slash = line.find('/');
    if (slash == absl::string_view::npos) continue;
    absl::string_view path = absl::StripTrailingAsciiWhitespace(line.substr(slash));
    absl::ConsumeSuffix(&path, " (deleted)");
    if (!absl::ConsumeSuffix(&path, "/libcoreclr.so")) continue;
    // .../shared/Microsoft.NETCore.App/<version>/libcoreclr.so
    std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
    if (parts.size() >= 2 && parts[parts.size() - 2] == "Microsoft.NETCore.App" &&
        IsVersion(parts.back())) {
      return absl::StrCat("dotnet ", parts.back());
    }
    runtime = "dotnet";  // a self-contained app: the runtime's version is not in its path
  }
  return runtime;
}

std::optional<uint64_t> StartTimeFromStat(absl::string_view stat_text) {
  // "PID (comm) S ppid ...": comm may hold spaces and parentheses, so fields
  // are counted after the last ')'. Field 3 (state) is the first there.
  const size_t paren = stat_text.rfind(')');
  if (paren == absl::string_view::npos) return std::nullopt;
  std::vector<absl::string_view> fields =
      absl::StrSplit(stat_text.substr(paren + 1), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  constexpr size_t kStartTime = 22 - 3;
  uint64_t start = 0;
  if (fields.size() <= kStartTime || !absl::SimpleAtoi(fields[kStartTime], &start)) {
    return std::nullopt;
  }
  return start;
}

ProcessLabels ReadProcessLabels(pid_t pid, const LabelSources& sources) {
  ProcessLabels labels;
  labels.node = sources.node;
  const std::string dir = absl::StrCat(sources.proc, "/", pid);

  if (auto text = collector::ReadProcCgroup(pid, sources.proc); text.ok()) {
    labels.cgroup =
        ResolveCgroupPath(sources.cgroup_namespace_root, collector::CgroupV2Path(*text));
    labels.container = collector::ContainerIdFromCgroup(*text);
    labels.pod_uid = PodUidFromCgroup(labels.cgroup);
  }
  labels.comm = std::string(absl::StripTrailingAsciiWhitespace(ReadSmallFile(dir + "/comm")));
  const std::string exe_path = ReadLink(dir + "/exe");
  labels.exe = std::string(base::BaseName(exe_path));
  if (auto maps = base::ReadFileBounded(dir + "/maps", kMaxMapsBytes, /*truncate_ok=*/true);
      maps.ok()) {
    labels.runtime = DotnetRuntimeFromMaps(*maps);
  }

  // Files of the process's own, read inside its root: never a path out of it.
  absl::StatusOr<std::shared_ptr<base::RootDir>> root = base::RootDir::Open(dir + "/root");
  if (root.ok() && absl::StartsWith(exe_path, "/")) {
    labels.build_id = BuildIdInside(**root, exe_path);
  }

  if (labels.pod_uid.empty()) return labels;
  if (auto environment = collector::ProcessEnvironment::Read(pid, sources.proc);
      environment.ok()) {
    std::optional<std::string> host = environment->Get("HOSTNAME");
    if (host.has_value() && IsHostName(*host)) labels.pod = std::move(*host);
  }
  labels.pod_namespace = NamespaceFromKubelet(sources.kubelet_pods, labels.pod_uid);
  if (labels.pod_namespace.empty() && root.ok()) {
    auto text = (*root)->ReadFile(std::string(kServiceAccountNamespace), kMaxSmallFileBytes);
    absl::string_view value = text.ok() ? absl::StripAsciiWhitespace(*text) : "";
    if (IsNamespaceName(value)) labels.pod_namespace = std::string(value);
  }
  return labels;
}

ProcessLabelCache::ProcessLabelCache(LabelSources sources, size_t max_entries)
    : sources_(std::move(sources)), max_entries_(std::max<size_t>(max_entries, 1)) {}

std::shared_ptr<const ProcessLabels> ProcessLabelCache::Get(pid_t pid) {
  const std::optional<uint64_t> start =
      StartTimeFromStat(ReadSmallFile(absl::StrCat(sources_.proc, "/", pid, "/stat")));
  if (auto found = by_pid_.find(pid); found != by_pid_.end()) {
    Order::iterator entry = found->second;
    // Gone (no start time to compare): the labels it had. Same start time:
    // the same process. Otherwise the pid was reused: read again.
    if (!start.has_value() || *start == entry->start_time) {
      order_.splice(order_.begin(), order_, entry);
      return entry->labels;
    }
    order_.erase(entry);
    by_pid_.erase(found);
  }
  auto labels = std::make_shared<const ProcessLabels>(ReadProcessLabels(pid, sources_));
  ++reads_;
  order_.push_front(Entry{pid, start.value_or(0), labels});
  by_pid_[pid] = order_.begin();
  while (order_.size() > max_entries_) {
    by_pid_.erase(order_.back().pid);
    order_.pop_back();
  }
  return labels;
}

}  // namespace profcpu::fleet
