// Runs numbered tasks on a few threads and adds what they spent to a
// ParallelStage, so a stage that splits can say in profcpu.log what it
// would take on more cores than the ones it ran on.
#ifndef PROFCPU_BASE_TIMED_TASKS_H_
#define PROFCPU_BASE_TIMED_TASKS_H_

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "base/stage_times.h"

namespace profcpu::base {

// CPU seconds of the calling thread.
inline double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Runs `task(0)` ... `task(count - 1)` on up to `threads` threads, the
// calling one among them, in any order; returns when all are done. Adds the
// tasks to `stage` (count, threads, longest and summed CPU seconds) and
// returns the CPU seconds the calling thread spent in them.
template <typename Task>
double RunTimedTasks(size_t count, size_t threads, const Task& task, ParallelStage* stage) {
  const size_t workers = std::clamp<size_t>(threads, 1, std::max<size_t>(count, 1));
  std::vector<double> cpu(count);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) {
      const double start = ThreadCpuSeconds();
      task(i);
      cpu[i] = ThreadCpuSeconds() - start;
    }
  };
  const double own_start = ThreadCpuSeconds();
  std::vector<std::thread> helpers;
  helpers.reserve(workers - 1);
  for (size_t i = 1; i < workers; ++i) helpers.emplace_back(work);
  work();
  const double own = ThreadCpuSeconds() - own_start;
  for (std::thread& helper : helpers) helper.join();
  for (double seconds : cpu) {
    stage->longest_task = std::max(stage->longest_task, seconds);
    stage->task_cpu += seconds;
  }
  stage->tasks += static_cast<int>(count);
  stage->threads = std::max(stage->threads, static_cast<int>(workers));
  return own;
}

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_TIMED_TASKS_H_
