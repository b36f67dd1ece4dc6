#include "fold/dotnet_runtime_events.h"

#include <dirent.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "recording/run_folder.h"

namespace profcpu::fold {

std::vector<std::pair<uint32_t, std::string>> DotnetEventFiles(const std::string& dir) {
  const std::string events_dir = absl::StrCat(dir, "/", recording::kDotnetEventsDir);
  std::vector<std::pair<uint32_t, std::string>> found;
  if (DIR* d = ::opendir(events_dir.c_str())) {
    while (dirent* entry = ::readdir(d)) {
      absl::string_view name = entry->d_name;
      uint32_t pid = 0;
      if (!absl::ConsumeSuffix(&name, ".nettrace") || !absl::SimpleAtoi(name, &pid)) continue;
      found.emplace_back(pid, entry->d_name);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  return found;
}

DotnetEventsOutput ReadDotnetEvents(const std::string& dir, base::RunLog* log) {
  DotnetEventsOutput out;
  const std::vector<std::pair<uint32_t, std::string>> found = DotnetEventFiles(dir);
  for (const auto& [pid, name] : found) {
    std::string relative = absl::StrCat(recording::kDotnetEventsDir, "/", name);
    DotnetEventsSummary summary;
    absl::Status read = SummarizeDotnetEvents(absl::StrCat(dir, "/", relative), pid, &summary);
    if (!read.ok()) {
      log->Warn(absl::StrCat("cannot read ", relative, ": ", read.message()));
      continue;
    }
    if (!summary.read_error.ok()) {
      log->Warn(absl::StrCat(relative, " is damaged or cut short (its summary holds the ",
                             summary.events, " events before): ", summary.read_error.message()));
    }
    out.files.push_back(std::move(relative));
    out.summaries.push_back(std::move(summary));
  }
  return out;
}

std::vector<std::pair<uint32_t, const DotnetEventsSummary::TimelineEvent*>> MergedDotnetTimeline(
    const DotnetEventsOutput& events) {
  std::vector<std::pair<uint32_t, const DotnetEventsSummary::TimelineEvent*>> merged;
  for (const auto& s : events.summaries) {
    for (const DotnetEventsSummary::TimelineEvent& e : s.timeline) merged.emplace_back(s.pid, &e);
  }
  std::stable_sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
    return a.second->start_ns < b.second->start_ns;
  });
  return merged;
}

std::string DotnetEventsHeadlines(const DotnetEventsOutput& events) {
  std::vector<std::string> lines;
  for (const auto& s : events.summaries) {
    std::string line = DotnetEventsHeadline(s);
    lines.push_back(events.summaries.size() > 1 ? absl::StrCat("process ", s.pid, ": ", line)
                                                : line);
  }
  return absl::StrJoin(lines, "; ");
}

}  // namespace profcpu::fold
