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

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_STAGE_TIMES_H_
