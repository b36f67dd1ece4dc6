#include "scripts/cli/live_status.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_format.h"

namespace profcpu::cli {
namespace {

std::string Clock(absl::Duration d) {
  int64_t seconds = absl::ToInt64Seconds(d);
  return absl::StrFormat("%02d:%02d", seconds / 60, seconds % 60);
}

}  // namespace

LiveStatus::LiveStatus() : enabled_(::isatty(STDERR_FILENO) == 1) {}

std::string LiveStatus::Format(const collector::Progress& p) {
  std::string limit = p.duration > absl::ZeroDuration() ? " / " + Clock(p.duration) : "";
  return absl::StrFormat("profcpu: %s%s  samples %d  lost %d", Clock(p.elapsed), limit, p.samples,
                         p.lost);
}

void LiveStatus::Update(const collector::Progress& progress) {
  if (!enabled_) return;
  // \r and erase-line: redraw in place.
  std::fprintf(stderr, "\r\033[K%s", Format(progress).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void LiveStatus::Finish() {
  if (enabled_ && drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace profcpu::cli
