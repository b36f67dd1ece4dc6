// `profcpu ps`: the processes profcpu could profile, with what matters for a
// good profile: their pid inside their container, the container, and for
// .NET processes the runtime, entry assembly and whether perf maps are on.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collector/dotnet/process_survey.h"
#include "collector/proc/proc_reader.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {
namespace {

std::string PerfMapText(const collector::dotnet::ProcessSummary& s) {
  if (!s.is_dotnet) return "-";
  if (!s.perf_map_on.has_value()) return "?";
  return *s.perf_map_on ? "on" : "off";
}

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

}  // namespace

int RunPs(const std::vector<std::string>& args) {
  FlagSet flags("ps", "profcpu ps [-all] [-json]",
                "Lists .NET processes (those with a diagnostics socket) with their pid on this\n"
                "host and inside their PID namespace, container id, runtime version and entry\n"
                "assembly (asked over the diagnostics socket), and whether perf maps are on\n"
                "(without them JIT frames are [unknown]: see profcpu perfmap).");
  flags.Add("all", "", "", "list every process, not only .NET ones");
  flags.Add("json", "", "", "print JSON instead of a table");
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  if (!flags.positionals().empty()) return UsageError(flags, "ps takes no arguments");
  bool all = flags.Bool("all");
  std::vector<collector::dotnet::ProcessSummary> rows;
  for (pid_t pid : collector::ListProcesses()) {
    auto s = collector::dotnet::SurveyProcess(pid, /*ask_runtime=*/true);
    if (!s.ok() || (!all && !s->is_dotnet)) continue;
    rows.push_back(std::move(*s));
  }
  if (flags.Bool("json")) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& s : rows) {
      nlohmann::ordered_json row = {{"pid", s.pid},
                                    {"namespace_pid", s.namespace_pids.back()},
                                    {"namespace_pids", s.namespace_pids},
                                    {"comm", s.comm},
                                    {"command_line", s.command_line},
                                    {"container_id", s.container_id},
                                    {"dotnet", s.is_dotnet}};
      if (s.is_dotnet) {
        row["runtime_version"] = s.runtime_version;
        row["entry_assembly"] = s.entry_assembly;
        row["perf_map"] = PerfMapText(s);
      }
      if (!s.problem.empty()) row["problem"] = s.problem;
      out.push_back(row);
    }
    std::printf("%s\n",
                out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::printf("%-8s %-8s %-13s %-10s %-8s %-20s %s\n", "PID", "NSPID", "CONTAINER", "RUNTIME",
              "PERFMAP", "ENTRY", "COMMAND");
  for (const auto& s : rows) {
    std::printf("%-8d %-8u %-13s %-10s %-8s %-20s %s\n", s.pid, s.namespace_pids.back(),
                OrDash(s.container_id.substr(0, 12)).c_str(),
                OrDash(s.runtime_version).c_str(), PerfMapText(s).c_str(),
                OrDash(s.entry_assembly).c_str(),
                (s.command_line.empty() ? "[" + s.comm + "]" : s.command_line).substr(0, 120).c_str());
  }
  if (rows.empty()) {
    std::fprintf(stderr, all ? "profcpu: no processes visible\n"
                             : "profcpu: no .NET processes found (a process with "
                               "DOTNET_EnableDiagnostics=0, or in a PID namespace this one cannot "
                               "see, does not show; -all lists every process)\n");
  }
  for (const auto& s : rows) {
    if (!s.problem.empty()) std::fprintf(stderr, "profcpu: pid %d: %s\n", s.pid, s.problem.c_str());
  }
  return kExitOk;
}

}  // namespace profcpu::cli
