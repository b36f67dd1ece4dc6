#include "base/stage_times.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace profcpu::base {
namespace {

// CLOCK_MONOTONIC: stage times must not jump with the wall clock.
double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

double MonotonicSeconds() { return Now(); }

std::string ParallelStageLine(absl::string_view stage, const ParallelStage& p) {
  char figures[256];
  std::snprintf(figures, sizeof(figures),
                "%.3f s wall, serial %.3f s, %d tasks on %d threads, longest task %.3f s, "
                "task CPU %.3f s",
                p.wall, p.serial, p.tasks, p.threads, p.longest_task, p.task_cpu);
  return absl::StrCat("parallel ", stage, ": ", figures);
}

int WorkerThreads() {
  // More threads than this cost more in merging than they save.
  constexpr int kMaxThreads = 16;
  if (const char* env = std::getenv("PROFCPU_THREADS"); env != nullptr && *env != '\0') {
    int n = 0;
    if (absl::SimpleAtoi(env, &n) && n >= 1) return std::min(n, 256);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  int usable = 1;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) usable = std::max(1, CPU_COUNT(&set));
  return std::min(usable, kMaxThreads);
}

StageTimes::StageTimes() : start_(Now()), last_(start_) {}

void StageTimes::Done(absl::string_view stage) {
  const double now = Now();
  absl::StrAppend(&text_, text_.empty() ? "" : ", ", stage, " ", absl::SixDigits(now - last_));
  last_ = now;
}

std::string StageTimes::Summary() const {
  return absl::StrCat("outputs built in ", absl::SixDigits(Now() - start_), " s (", text_, ")");
}

}  // namespace profcpu::base
