// What a finished collection tells the run's log: its notes and warnings,
// how and why it stopped, and what went wrong with the samples (none came,
// some were lost), each as the line the log shows.
#ifndef PROFCPU_COLLECTOR_COLLECTION_OUTCOME_H_
#define PROFCPU_COLLECTOR_COLLECTION_OUTCOME_H_

#include <string>
#include <vector>

#include "collector/collection.h"

namespace profcpu::collector {

struct OutcomeLine {
  bool warning = false;  // a warning (shown on stderr too), else information
  std::string text;
};

// In the order the log shows them: the result's notes, its warnings,
// "collection stopped (REASON): N samples, M lost", a started command's exit
// code, then a warning when there were no samples and one when samples were
// lost because the ring buffers filled.
std::vector<OutcomeLine> CollectionOutcomeLines(const CollectionOptions& options,
                                                const CollectionResult& result);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_COLLECTION_OUTCOME_H_
