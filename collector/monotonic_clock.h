// The clock a collection stamps everything with: samples, process records,
// perf-map looks and the recording's start and end.
#ifndef PROFCPU_COLLECTOR_MONOTONIC_CLOCK_H_
#define PROFCPU_COLLECTOR_MONOTONIC_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace profcpu::collector {

// CLOCK_MONOTONIC now, in nanoseconds (the clock samples are stamped with).
inline uint64_t MonotonicNowNs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_MONOTONIC_CLOCK_H_
