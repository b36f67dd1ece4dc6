// The live line on a terminal while collecting: elapsed time, samples, lost
// samples. Off when stderr is not a terminal (logs and CI stay clean).
#ifndef PROFCPU_SCRIPTS_CLI_LIVE_STATUS_H_
#define PROFCPU_SCRIPTS_CLI_LIVE_STATUS_H_

#include <string>

#include "collector/collection.h"

namespace profcpu::cli {

class LiveStatus {
 public:
  LiveStatus();
  void Update(const collector::Progress& progress);
  // Ends the line so later output starts on a fresh one.
  void Finish();

  static std::string Format(const collector::Progress& progress);

 private:
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_LIVE_STATUS_H_
