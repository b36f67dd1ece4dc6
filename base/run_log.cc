#include "base/run_log.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace profcpu::base {

RunLog::~RunLog() { Close(); }

bool RunLog::Open(const std::string& path) {
  file_ = std::fopen(path.c_str(), "ae");
  if (file_ == nullptr) return false;
  for (const std::string& line : pending_) std::fputs(line.c_str(), file_);
  pending_.clear();
  std::fflush(file_);
  return true;
}

void RunLog::Write(absl::string_view level, absl::string_view message) {
  std::string line = absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3S%Ez", absl::Now(),
                                                   absl::LocalTimeZone()),
                                  " ", level, " ", message, "\n");
  if (file_ == nullptr) {
    pending_.push_back(std::move(line));
    return;
  }
  std::fputs(line.c_str(), file_);
  std::fflush(file_);
}

void RunLog::Info(absl::string_view message) { Write("info", message); }

void RunLog::Warn(absl::string_view message) {
  Write("warning", message);
  warnings_.emplace_back(message);
  if (!echo_warnings_) return;
  std::fprintf(stderr, "profcpu: warning: %.*s\n", static_cast<int>(message.size()),
               message.data());
}

void RunLog::Close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace profcpu::base
