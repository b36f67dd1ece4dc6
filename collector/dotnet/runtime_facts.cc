#include "collector/dotnet/runtime_facts.h"

#include "collector/dotnet/runtime_commands.h"

namespace profcpu::collector::dotnet {

recording::DotnetRuntime& RuntimeFacts::Of(pid_t pid) {
  recording::DotnetRuntime& facts = by_pid_[pid];
  facts.pid = static_cast<uint32_t>(pid);
  return facts;
}

void RuntimeFacts::NoteVersion(const DiagnosticsTarget& target) {
  recording::DotnetRuntime& facts = Of(target.pid);
  if (!facts.runtime_version.empty()) return;
  auto info = QueryProcessInfo(target);
  if (info.ok()) facts.runtime_version = info->runtime_version;
}

std::vector<recording::DotnetRuntime> RuntimeFacts::Records(uint64_t time_ns) const {
  std::vector<recording::DotnetRuntime> out;
  for (const auto& [pid, facts] : by_pid_) {
    out.push_back(facts);
    out.back().time_ns = time_ns;
  }
  return out;
}

}  // namespace profcpu::collector::dotnet
