// Seconds spent per stage of a long job, for profcpu.log: what the user
// waited for after the collection (or in postprocess) and where it went.
#ifndef PROFCPU_BASE_STAGE_TIMES_H_
#define PROFCPU_BASE_STAGE_TIMES_H_

#include <string>

#include "absl/strings/string_view.h"

namespace profcpu::base {

class StageTimes {
 public:
  StageTimes();

  // The stage that just ended, timed from the previous one (or the start).
  void Done(absl::string_view stage);

  // "outputs built in T s (stage t, stage t, ...)".
  std::string Summary() const;

 private:
  double start_;
  double last_;
  std::string text_;
};

// What a stage split across threads spent, for its profcpu.log line: bench/
// end_of_run.py projects a machine with more cores from it (serial +
// max(longest task, task CPU / cores)), since the cores it is measured on
// are fewer than the users'.
struct ParallelStage {
  double wall = 0;          // the stage, start to end
  double serial = 0;        // what did not split (reading, merging), CPU s
  int tasks = 0;
  int threads = 0;
  double longest_task = 0;  // CPU seconds
  double task_cpu = 0;      // the tasks' CPU seconds, summed
};

// "parallel STAGE: W s wall, serial S s, N tasks on K threads, longest task
// L s, task CPU C s".
std::string ParallelStageLine(absl::string_view stage, const ParallelStage& p);

// How many threads a stage that splits may use: the cores this process may
// run on (sched_getaffinity), at most 16; PROFCPU_THREADS=N overrides (1:
// the one-thread path, for comparisons and tests).
int WorkerThreads();

// CLOCK_MONOTONIC seconds, for timing tasks.
double MonotonicSeconds();

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_STAGE_TIMES_H_
