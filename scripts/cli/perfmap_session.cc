#include "scripts/cli/perfmap_session.h"

#include "absl/strings/str_cat.h"
#include "collector/dotnet/runtime_commands.h"
#include "collector/proc/process_environment.h"

namespace profcpu::cli {

PerfMapSession PerfMapSession::Start(const std::vector<pid_t>& pids, RunLog* log) {
  PerfMapSession session;
  for (pid_t pid : pids) {
    auto target = collector::dotnet::FindDiagnosticsTarget(pid);
    if (!target.ok()) {
      if (!absl::IsNotFound(target.status())) {
        log->Warn(absl::StrCat("cannot reach the .NET diagnostics socket of process ", pid, ": ",
                               target.status().message()));
      }
      continue;  // not a .NET process
    }
    auto env = collector::ProcessEnvironment::Read(pid);
    auto configured = env.ok() ? env->DotnetPerfMapEnabled() : std::nullopt;
    if (configured.has_value() && *configured != "0") {
      if (*configured == "3") {
        log->Warn(absl::StrCat("process ", pid, " writes a perf map but no jitdump "
                               "(DOTNET_PerfMapEnabled=3): precompiled ReadyToRun frames will be "
                               "[unknown]; DOTNET_PerfMapEnabled=1 names them too"));
      }
      log->Info(absl::StrCat("process ", pid, " already writes perf maps (DOTNET_PerfMapEnabled=",
                             *configured, ")"));
      continue;
    }
    absl::Status enabled =
        collector::dotnet::EnablePerfMap(*target, collector::dotnet::PerfMapType::kAll);
    if (!enabled.ok()) {
      log->Warn(absl::StrCat("JIT frames of process ", pid, " will be [unknown]: ",
                             enabled.message()));
      continue;
    }
    log->Info(absl::StrCat("turned perf maps on for .NET process ", pid,
                           " for this run (profcpu turns them off at the end)"));
    session.enabled_.push_back(std::move(*target));
  }
  return session;
}

void PerfMapSession::Finish(RunLog* log) {
  for (const auto& target : enabled_) {
    absl::Status disabled = collector::dotnet::DisablePerfMap(target);
    if (disabled.ok()) {
      log->Info(absl::StrCat("turned perf maps off again for process ", target.pid));
    } else if (!absl::IsUnavailable(disabled) && !absl::IsNotFound(disabled)) {
      log->Warn(absl::StrCat("could not turn perf maps off again for process ", target.pid, ": ",
                             disabled.message(), "; run profcpu perfmap disable -pid ",
                             target.pid));
    }
  }
  enabled_.clear();
}

}  // namespace profcpu::cli
