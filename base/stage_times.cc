#include "base/stage_times.h"

#include <time.h>

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
