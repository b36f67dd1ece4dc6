// profcpu.log: what a run did, with times, for the archive; warnings are
// also shown on stderr because the user must see them now, not later.
#ifndef PROFCPU_BASE_RUN_LOG_H_
#define PROFCPU_BASE_RUN_LOG_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace profcpu::base {

class RunLog {
 public:
  RunLog() = default;
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  // Starts writing (appending) to `path`; lines logged before are written first.
  bool Open(const std::string& path);
  void Info(absl::string_view message);
  void Warn(absl::string_view message);
  void Close();

  const std::vector<std::string>& warnings() const { return warnings_; }
  // Warnings go to stderr as they come unless turned off: the fleet agent
  // shows each distinct warning once, not once per window.
  void set_echo_warnings(bool echo) { echo_warnings_ = echo; }

 private:
  void Write(absl::string_view level, absl::string_view message);
  std::FILE* file_ = nullptr;
  std::vector<std::string> pending_;
  std::vector<std::string> warnings_;
  bool echo_warnings_ = true;
};

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_RUN_LOG_H_
