#include "collector/proc/process_environment.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/file_io.h"

namespace profcpu::collector {
namespace {

constexpr size_t kMaxEnvironBytes = 1 << 20;

std::string DirectoryOr(std::optional<std::string> value) {
  if (!value.has_value() || value->empty()) return "/tmp";
  std::string dir = std::move(*value);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace

ProcessEnvironment ProcessEnvironment::Parse(absl::string_view environ_text) {
  ProcessEnvironment env;
  for (absl::string_view entry : absl::StrSplit(environ_text, '\0', absl::SkipEmpty())) {
    size_t eq = entry.find('=');
    if (eq == absl::string_view::npos || eq == 0) continue;
    // The first definition wins, as getenv() finds it first.
    env.variables_.try_emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

absl::StatusOr<ProcessEnvironment> ProcessEnvironment::Read(pid_t pid, const std::string& proc) {
  auto text = base::ReadFileBounded(absl::StrCat(proc, "/", pid, "/environ"), kMaxEnvironBytes,
                                    /*truncate_ok=*/true);
  if (!text.ok()) return text.status();
  return Parse(*text);
}

std::optional<std::string> ProcessEnvironment::Get(absl::string_view name) const {
  auto it = variables_.find(name);
  if (it == variables_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> ProcessEnvironment::DotnetPerfMapEnabled() const {
  // DOTNET_ takes precedence over the older COMPlus_ prefix.
  if (auto v = Get("DOTNET_PerfMapEnabled")) return v;
  return Get("COMPlus_PerfMapEnabled");
}

std::string ProcessEnvironment::DotnetPerfMapDirectory() const {
  if (auto v = Get("DOTNET_PerfMapJitDumpPath")) return DirectoryOr(v);
  return DirectoryOr(Get("COMPlus_PerfMapJitDumpPath"));
}

std::string ProcessEnvironment::TempDirectory() const { return DirectoryOr(Get("TMPDIR")); }

}  // namespace profcpu::collector
