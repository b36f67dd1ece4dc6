// How a collection is said to the user before it starts: the target ("pid
// 42", "container 3f4e5a6b7c8d", "all processes", or the command) and what is
// sampled ("99 Hz (cpu-clock)", "off-CPU time (BPF)", ...).
#ifndef PROFCPU_COLLECTOR_COLLECTION_TEXT_H_
#define PROFCPU_COLLECTOR_COLLECTION_TEXT_H_

#include <string>

#include "collector/collection.h"

namespace profcpu::collector {

std::string DescribeTarget(const CollectionOptions& options);
std::string DescribeSampling(const CollectionOptions& options);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_COLLECTION_TEXT_H_
