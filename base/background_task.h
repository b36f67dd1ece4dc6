// Runs one function returning a Status on a thread of its own: the outputs
// of a run read the same Profile, so the largest are written side by side.
// Wait() returns the function's Status; leaving the scope without Wait()
// (an early return) still joins the thread, so no write outlives the data
// it reads.
#ifndef PROFCPU_BASE_BACKGROUND_TASK_H_
#define PROFCPU_BASE_BACKGROUND_TASK_H_

#include <functional>
#include <thread>
#include <utility>

#include "absl/status/status.h"

namespace profcpu::base {

class BackgroundTask {
 public:
  explicit BackgroundTask(std::function<absl::Status()> task)
      : thread_([this, task = std::move(task)] { status_ = task(); }) {}
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;
  ~BackgroundTask() {
    if (thread_.joinable()) thread_.join();
  }

  // Joins the thread (once); the task's Status.
  absl::Status Wait() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }

 private:
  absl::Status status_;  // written by the thread, read after the join
  std::thread thread_;   // last: starts once status_ exists
};

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_BACKGROUND_TASK_H_
