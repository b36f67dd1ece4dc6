// `profcpu perfmap enable|disable -pid N [-type all|jitdump|perfmap]`: turns a
// running .NET 8+ process's perf map and jitdump on or off through its
// diagnostics socket, with no restart. Enabling replays every method already
// compiled, so a profile taken afterwards names them all.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "collector/dotnet/diagnostics_client.h"
#include "collector/dotnet/runtime_commands.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {

int RunPerfmap(const std::vector<std::string>& args) {
  FlagSet flags("perfmap", "profcpu perfmap enable|disable -pid PID [-type all|jitdump|perfmap]",
                "Turns the perf map (/tmp/perf-PID.map) and jitdump (/tmp/jit-PID.dump) of a "
                "running .NET 8+\nprocess on or off through its diagnostics socket. Older "
                "runtimes need a restart with\nDOTNET_PerfMapEnabled=1 instead.");
  flags.Add("pid", "PID", "", "the .NET process (required)");
  flags.Add("type", "TYPE", "all", "what to write when enabling: all, jitdump or perfmap");
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  auto usage = [&](absl::string_view message) { return UsageError(flags, message); };
  if (flags.positionals().size() != 1 ||
      (flags.positionals()[0] != "enable" && flags.positionals()[0] != "disable")) {
    return usage("perfmap needs 'enable' or 'disable'");
  }
  if (!flags.IsSet("pid")) return usage("perfmap needs -pid PID");
  int64_t pid;
  if (absl::Status s = flags.Int("pid", 1, 0x3fffffff, &pid); !s.ok()) return usage(s.message());
  auto type = collector::dotnet::ParsePerfMapType(flags.String("type"));
  if (!type.ok()) return usage(type.status().message());

  auto target = collector::dotnet::FindDiagnosticsTarget(static_cast<pid_t>(pid));
  if (!target.ok()) {
    std::fprintf(stderr, "profcpu: %s\n", std::string(target.status().message()).c_str());
    return kExitFailure;
  }
  bool enable = flags.positionals()[0] == "enable";
  absl::Status status = enable ? collector::dotnet::EnablePerfMap(*target, *type)
                               : collector::dotnet::DisablePerfMap(*target);
  if (!status.ok()) {
    std::fprintf(stderr, "profcpu: %s\n", std::string(status.message()).c_str());
    return kExitFailure;
  }
  std::fprintf(stderr, "profcpu: perf maps %s for process %lld\n", enable ? "on" : "off",
               static_cast<long long>(pid));
  return kExitOk;
}

}  // namespace profcpu::cli
