// How a collection is said to the user before it starts: the target ("pid
// 42", "container 3f4e5a6b7c8d", "all processes", or the command) and what is
// sampled ("99 Hz (cpu-clock)", "off-CPU time (BPF)", ...).
#ifndef PROFCPU_COLLECTOR_COLLECTION_TEXT_H_
#define PROFCPU_COLLECTOR_COLLECTION_TEXT_H_

#include <string>

#include "collector/collection.h"

namespace profcpu::collector {

std::string DescribeTarget(const CollectionOptions& options);
// "pid 42", or "pid 42 (the process of thread 43)" when the pid given was a
// thread of process 42 (-pid TID profiles the whole process).
std::string DescribeProcessTarget(pid_t process, pid_t given_thread);
std::string DescribeSampling(const CollectionOptions& options);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_COLLECTION_TEXT_H_
