// What `profcpu ps` shows about a process: its pids (host and in-namespace),
// command, container, and for .NET processes the runtime version, entry
// assembly and whether perf maps are on.
#ifndef PROFCPU_COLLECTOR_DOTNET_PROCESS_SURVEY_H_
#define PROFCPU_COLLECTOR_DOTNET_PROCESS_SURVEY_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace profcpu::collector::dotnet {

struct ProcessSummary {
  pid_t pid = 0;
  std::vector<uint32_t> namespace_pids;  // outermost first
  std::string comm;
  std::string command_line;
  std::string container_id;  // 64 hex digits, or empty
  bool is_dotnet = false;    // has a diagnostics socket
  std::string runtime_version;
  std::string entry_assembly;
  std::string problem;  // why .NET details are missing, if they are
  std::optional<bool> perf_map_on;  // unknown when the environment is unreadable
};

// NotFound if the process is gone. `ask_runtime`: query .NET processes over
// the diagnostics socket (slower; ps does, collect does not need to).
absl::StatusOr<ProcessSummary> SurveyProcess(pid_t pid, bool ask_runtime,
                                             const std::string& proc = "/proc");

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_PROCESS_SURVEY_H_
