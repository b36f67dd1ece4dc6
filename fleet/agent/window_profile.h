// One agent window's recording named: fold's replay, symbolize's names
// (with the agent's symbol cache, so a window only loads what earlier
// windows did not), fold's shaping. The first half of what collect does
// (scripts/cli/pipeline.cc), without the outputs: the window's rows are its
// only output.
#ifndef PROFCPU_FLEET_AGENT_WINDOW_PROFILE_H_
#define PROFCPU_FLEET_AGENT_WINDOW_PROFILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "base/run_log.h"
#include "fold/profile.h"
#include "fold/recording_summary.h"
#include "symbolize/loaded_symbol_cache.h"
#include "symbolize/process_files.h"

namespace profcpu::fleet {

struct NamedWindow {
  fold::RecordingSummary summary;
  fold::Profile profile;  // named, shaped, with its modules
};

// `dir` is the window's run folder (its recording and jit/ copies); `cache`
// keeps what naming loads for the next window.
absl::StatusOr<NamedWindow> NameWindow(const std::string& dir,
                                       const symbolize::ProcessFiles* files,
                                       symbolize::LoadedSymbolCache* cache, base::RunLog* log);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_WINDOW_PROFILE_H_
