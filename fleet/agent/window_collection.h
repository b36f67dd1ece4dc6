// One agent window: the collector sampling into a folder of its own for the
// window's length (cut at the next UTC midnight, so a window's samples fall
// in one partition of the store), named at once, its rows returned and the
// folder removed.
#ifndef PROFCPU_FLEET_AGENT_WINDOW_COLLECTION_H_
#define PROFCPU_FLEET_AGENT_WINDOW_COLLECTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collector/collection_options.h"
#include "fleet/agent/process_labels.h"
#include "fleet/agent/window_rows.h"
#include "symbolize/loaded_symbol_cache.h"

namespace profcpu::fleet {

struct TakenWindow {
  WindowRows rows;
  uint64_t window_id = 0;
  uint64_t samples = 0;  // the recording's, before naming (== rows.total)
  uint64_t lost = 0;     // samples the kernel could not queue, as counted
  absl::Duration collected;
  absl::Duration named;
  bool stopped = false;  // a stop request ended it early
  std::vector<std::string> warnings;  // the collector's and the symbolizer's
};

// The length of the window starting at `start`: `window`, or less so it
// ends at the next UTC midnight.
absl::Duration WindowLength(absl::Time start, absl::Duration window);

// `base` holds the target and sampling; `folder` must not exist.
absl::StatusOr<TakenWindow> TakeWindow(const collector::CollectionOptions& base,
                                       absl::Duration window, const std::string& folder,
                                       const std::string& node, ProcessLabelCache* labels,
                                       symbolize::LoadedSymbolCache* symbols);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_WINDOW_COLLECTION_H_
