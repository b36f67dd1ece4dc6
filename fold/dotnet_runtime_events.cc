#include "scripts/cli/dotnet_events_output.h"

#include <dirent.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "recording/run_folder.h"

namespace profcpu::cli {

DotnetEventsOutput ReadDotnetEvents(const std::string& dir, base::RunLog* log) {
  DotnetEventsOutput out;
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
  for (const auto& [pid, name] : found) {
    std::string relative = absl::StrCat(recording::kDotnetEventsDir, "/", name);
    collector::dotnet::DotnetEventsSummary summary;
    absl::Status read =
        collector::dotnet::SummarizeDotnetEvents(absl::StrCat(dir, "/", relative), pid, &summary);
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

namespace {

using TimelineEvent = collector::dotnet::DotnetEventsSummary::TimelineEvent;

// (process, event) pairs of every timeline, in time order.
std::vector<std::pair<uint32_t, const TimelineEvent*>> MergedTimeline(
    const DotnetEventsOutput& events) {
  std::vector<std::pair<uint32_t, const TimelineEvent*>> merged;
  for (const auto& s : events.summaries) {
    for (const TimelineEvent& e : s.timeline) merged.emplace_back(s.pid, &e);
  }
  std::stable_sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
    return a.second->start_ns < b.second->start_ns;
  });
  return merged;
}

bool IsGc(const TimelineEvent& e) { return e.kind == TimelineEvent::Kind::kGcPause; }

}  // namespace

std::vector<fold::PerfScriptEvent> PerfScriptEventsOf(const DotnetEventsOutput& events) {
  std::vector<fold::PerfScriptEvent> out;
  for (const auto& [pid, e] : MergedTimeline(events)) {
    out.push_back({e->start_ns, pid, IsGc(*e) ? "dotnet:gc" : "dotnet:exceptions",
                   absl::StrCat("[.NET ", e->label, "]")});
  }
  return out;
}

std::vector<render::PageEvent> PageEventsOf(const DotnetEventsOutput& events, uint64_t start_ns) {
  std::vector<render::PageEvent> out;
  for (const auto& [pid, e] : MergedTimeline(events)) {
    if (e->start_ns < start_ns) continue;
    out.push_back({static_cast<double>(e->start_ns - start_ns) / 1e9,
                   static_cast<double>(e->duration_ns) / 1e9, IsGc(*e) ? "gc" : "exception", pid,
                   e->label});
  }
  return out;
}

std::string DotnetEventsHeadlines(const DotnetEventsOutput& events) {
  std::vector<std::string> lines;
  for (const auto& s : events.summaries) {
    std::string line = collector::dotnet::DotnetEventsHeadline(s);
    lines.push_back(events.summaries.size() > 1 ? absl::StrCat("process ", s.pid, ": ", line)
                                                : line);
  }
  return absl::StrJoin(lines, "; ");
}

}  // namespace profcpu::cli
