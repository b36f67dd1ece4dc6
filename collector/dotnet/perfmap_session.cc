#include "collector/dotnet/perfmap_session.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "collector/dotnet/perfmap_state.h"
#include "collector/dotnet/runtime_commands.h"

namespace profcpu::collector::dotnet {
namespace {

// How long a watched process may lack a diagnostics socket before profcpu
// decides it is not a .NET process (a runtime creates it in milliseconds).
constexpr uint64_t kGiveUpNs = 10'000'000'000;
// A runtime whose jitdump keeps failing is not revived forever.
constexpr int kMaxRevivals = 5;

uint64_t SteadyNowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

void PerfMapSession::Watch(pid_t pid) {
  auto [it, inserted] = watched_.try_emplace(pid);
  if (!inserted) return;
  it->second.since_ns = SteadyNowNs();
  it->second.settled = Handle(pid, &it->second);
}

void PerfMapSession::Poll() {
  uint64_t now = SteadyNowNs();
  for (auto& [pid, watched] : watched_) {
    if (watched.settled) continue;
    watched.settled = Handle(pid, &watched) ||
                      (!watched.runtime.has_value() && now - watched.since_ns > kGiveUpNs);
  }
}

bool PerfMapSession::Handle(pid_t pid, Watched* watched) {
  if (!watched->runtime.has_value()) {
    auto target = FindDiagnosticsTarget(pid);
    if (absl::IsNotFound(target.status())) return false;  // not (yet) a .NET runtime
    if (!target.ok()) {
      // Out of reach, it cannot even be told whether it runs .NET at all.
      log_->Warn(absl::StrCat("cannot check process ", pid,
                              " for a .NET runtime (if it is one, its JIT frames may stay "
                              "unnamed): ",
                              target.status().message()));
      return true;
    }
    watched->runtime = std::move(*target);
    if (facts_ != nullptr) facts_->NoteVersion(*watched->runtime);
  }
  const DiagnosticsTarget& target = *watched->runtime;
  std::optional<PerfMapState> state = ReadPerfMapState(pid);
  if (!state.has_value()) return true;  // gone, or its files are out of reach
  if (facts_ != nullptr && state->configured.has_value()) {
    facts_->Of(pid).perf_map_configured = *state->configured;
  }
  if (watched->revivals == 0 && (state->perf_map_open || state->jitdump_open)) {
    Note(pid, !state->jitdump_open && state->configured == "3" ? "perfmap_only" : "environment");
  }
  if (!state->perf_map_open && !state->jitdump_open && watched->revivals == 0) {
    absl::Status enabled = EnablePerfMap(target, PerfMapType::kAll);
    if (!enabled.ok()) {
      log_->Warn(absl::StrCat("JIT frames of process ", pid, " will be [unknown]: ",
                              enabled.message()));
      Note(pid, "failed");
      return true;
    }
    Note(pid, "enabled_by_profcpu");
    log_->Info(absl::StrCat("turned perf maps on for .NET process ", pid,
                            " for this run (profcpu turns them off at the end)"));
    enabled_.push_back(target);
    ++watched->revivals;
    return false;  // keep an eye on its jitdump
  }
  if (state->perf_map_open && !state->jitdump_open) {
    if (state->configured == "3") {
      log_->Warn(absl::StrCat("process ", pid, " writes a perf map but no jitdump "
                              "(DOTNET_PerfMapEnabled=3): precompiled ReadyToRun frames will be "
                              "[unknown]; DOTNET_PerfMapEnabled=1 names them too"));
      return true;
    }
    if (watched->revivals >= kMaxRevivals) return true;
    // The runtime dropped its jitdump after a failed write: start it again,
    // which also replays the precompiled code it has run so far.
    absl::Status revived = EnablePerfMap(target, PerfMapType::kJitDump);
    ++watched->revivals;
    if (revived.ok()) {
      if (facts_ != nullptr && facts_->Of(pid).perf_maps == "environment") {
        Note(pid, "environment_jitdump_restarted");
      }
      log_->Info(absl::StrCat("restarted the jitdump of .NET process ", pid,
                              " (the runtime had stopped writing it), which names precompiled "
                              "code"));
    } else {
      log_->Warn(absl::StrCat("precompiled frames of process ", pid, " may be [unknown]: ",
                              revived.message()));
      return true;
    }
  }
  return false;  // watch on: the jitdump may fail again
}

void PerfMapSession::Note(pid_t pid, const char* perf_maps) {
  if (facts_ != nullptr) facts_->Of(pid).perf_maps = perf_maps;
}

void PerfMapSession::Finish() {
  for (const auto& target : enabled_) {
    absl::Status disabled = DisablePerfMap(target);
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

}  // namespace profcpu::collector::dotnet
