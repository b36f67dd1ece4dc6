#include "collector/collection_outcome.h"

#include "absl/strings/str_cat.h"
#include "collector/profile_mode.h"

namespace profcpu::collector {
namespace {

// Why a run has no samples, in the words that point at the fix: an idle
// target, or a PMU that counts without interrupting (most VMs).
std::string NoSamplesWarning(const CollectionOptions& options) {
  if (options.profile.mode == ProfileMode::kOffCpu) {
    return "no off-CPU events: the target did not block while profcpu watched";
  }
  if (options.sampler.event.hardware) {
    return absl::StrCat("the '", options.sampler.event.name,
                        "' event produced no samples: this machine's PMU counts but does not "
                        "deliver sampling interrupts (common in VMs); use -event cpu-clock");
  }
  return "no samples: the target did not run on a CPU while profcpu was sampling";
}

}  // namespace

std::vector<OutcomeLine> CollectionOutcomeLines(const CollectionOptions& options,
                                                const CollectionResult& result) {
  std::vector<OutcomeLine> lines;
  for (const std::string& note : result.notes) lines.push_back({false, note});
  for (const std::string& warning : result.warnings) lines.push_back({true, warning});
  lines.push_back({false, absl::StrCat("collection stopped (", result.stop_reason, "): ",
                                       result.counters.samples, " samples, ",
                                       result.counters.lost, " lost")});
  if (!options.command.empty()) {
    lines.push_back({false, absl::StrCat("command exited with code ", result.command_exit_code)});
  }
  if (result.counters.samples == 0) lines.push_back({true, NoSamplesWarning(options)});
  if (result.counters.lost > 0) {
    lines.push_back({true, absl::StrCat(result.counters.lost,
                                        " samples were lost because the ring buffers filled; "
                                        "use a larger -mmap-pages or a lower -freq")});
  }
  return lines;
}

}  // namespace profcpu::collector
