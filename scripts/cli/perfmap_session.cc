#include "scripts/cli/perfmap_session.h"

#include "absl/strings/str_cat.h"
#include "collector/collection.h"
#include "collector/dotnet/perfmap_state.h"
#include "collector/dotnet/runtime_commands.h"

namespace profcpu::cli {
namespace {

// How long a watched process may lack a diagnostics socket before profcpu
// decides it is not a .NET process (a runtime creates it in milliseconds).
constexpr uint64_t kGiveUpNs = 10'000'000'000;

}  // namespace

void PerfMapSession::Watch(pid_t pid) {
  if (watched_.try_emplace(pid, collector::MonotonicNowNs()).second && Handle(pid)) {
    watched_[pid] = 0;  // done
  }
}

void PerfMapSession::Poll() {
  uint64_t now = collector::MonotonicNowNs();
  for (auto& [pid, since] : watched_) {
    if (since == 0) continue;
    if (Handle(pid) || now - since > kGiveUpNs) since = 0;
  }
}

bool PerfMapSession::Handle(pid_t pid) {
  namespace dotnet = collector::dotnet;
  auto target = dotnet::FindDiagnosticsTarget(pid);
  if (absl::IsNotFound(target.status())) return false;  // not (yet) a .NET runtime
  if (!target.ok()) {
    log_->Warn(absl::StrCat("cannot reach the .NET diagnostics socket of process ", pid, ": ",
                            target.status().message()));
    return true;
  }
  std::optional<dotnet::PerfMapState> state = dotnet::ReadPerfMapState(pid);
  if (!state.has_value()) return true;  // gone, or its files are out of reach
  if (state->perf_map_open && state->jitdump_open) {
    log_->Info(absl::StrCat("process ", pid, " already writes its perf map and jitdump"));
    return true;
  }
  if (state->perf_map_open) {
    if (state->configured == "3") {
      log_->Warn(absl::StrCat("process ", pid, " writes a perf map but no jitdump "
                              "(DOTNET_PerfMapEnabled=3): precompiled ReadyToRun frames will be "
                              "[unknown]; DOTNET_PerfMapEnabled=1 names them too"));
      return true;
    }
    // The jitdump was configured but the runtime dropped it: start it again.
    absl::Status revived = dotnet::EnablePerfMap(*target, dotnet::PerfMapType::kJitDump);
    if (revived.ok()) {
      log_->Info(absl::StrCat("restarted the jitdump of .NET process ", pid,
                              " (the runtime had stopped writing it), which names precompiled "
                              "code"));
    } else {
      log_->Warn(absl::StrCat("precompiled frames of process ", pid, " may be [unknown]: ",
                              revived.message()));
    }
    return true;
  }
  absl::Status enabled = dotnet::EnablePerfMap(*target, dotnet::PerfMapType::kAll);
  if (!enabled.ok()) {
    log_->Warn(absl::StrCat("JIT frames of process ", pid, " will be [unknown]: ",
                            enabled.message()));
    return true;
  }
  log_->Info(absl::StrCat("turned perf maps on for .NET process ", pid,
                          " for this run (profcpu turns them off at the end)"));
  enabled_.push_back(std::move(*target));
  return true;
}

void PerfMapSession::Finish() {
  for (const auto& target : enabled_) {
    absl::Status disabled = collector::dotnet::DisablePerfMap(target);
    if (disabled.ok()) {
      log_->Info(absl::StrCat("turned perf maps off again for process ", target.pid));
    } else if (!absl::IsUnavailable(disabled) && !absl::IsNotFound(disabled)) {
      log_->Warn(absl::StrCat("could not turn perf maps off again for process ", target.pid,
                              ": ", disabled.message(), "; run profcpu perfmap disable -pid ",
                              target.pid));
    }
  }
  enabled_.clear();
  watched_.clear();
}

}  // namespace profcpu::cli
