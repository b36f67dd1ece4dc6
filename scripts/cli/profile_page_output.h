// profile.html beside flamegraph.svg: the same frames, names and colours,
// with every sample's time and thread (render/profile_page_writer.h).
#ifndef PROFCPU_SCRIPTS_CLI_PROFILE_PAGE_OUTPUT_H_
#define PROFCPU_SCRIPTS_CLI_PROFILE_PAGE_OUTPUT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "fold/dotnet_runtime_events.h"
#include "fold/folded_writer.h"
#include "fold/profile.h"
#include "fold/recording_summary.h"
#include "render/flamegraph_options.h"

namespace profcpu::cli {

struct PageSource {
  // The run's summary (mode, start, duration, how precise times are), or
  // nullptr for perf script text read from elsewhere (`profcpu html`).
  const fold::RecordingSummary* summary = nullptr;
  fold::FoldOptions fold;             // as the flame graph was folded
  render::FlameGraphOptions graph;    // title, palette, cool subtree
  uint64_t start_ns = 0;              // time 0 when there is no summary
  // The .NET runtimes' events for the events lane; may be null.
  const fold::DotnetEventsOutput* dotnet_events = nullptr;
};

// Writes the page to `path`.
absl::Status WriteProfilePage(const fold::Profile& profile, const PageSource& source,
                              const std::string& path);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_PROFILE_PAGE_OUTPUT_H_
