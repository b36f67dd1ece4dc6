// profile.html beside flamegraph.svg: the same frames, names and colours,
// with every sample's time and thread (profile_page_writer.h), headed by
// the run's facts (mode, start, duration, how precise times are) and, in
// its events lane, the runtimes' events.
#ifndef PROFCPU_RENDER_RUN_PAGE_H_
#define PROFCPU_RENDER_RUN_PAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fold/folded_writer.h"
#include "fold/profile.h"
#include "fold/recording_summary.h"
#include "render/flamegraph_options.h"
#include "render/profile_page_writer.h"

namespace profcpu::render {

// Another profile of the run the page can switch to (the .NET event
// profiles): named like the main one, weighted by its samples' periods.
struct PageSourceView {
  const fold::Profile* profile = nullptr;
  std::string key;          // PageView's
  std::string label;
  std::string count_name;
  std::string description;
};

struct PageSource {
  // The run's summary (mode, start, duration, how precise times are), or
  // nullptr for perf script text read from elsewhere (`profcpu html`).
  const fold::RecordingSummary* summary = nullptr;
  fold::FoldOptions fold;     // as the flame graph was folded
  FlameGraphOptions graph;    // title, palette, cool subtree
  uint64_t start_ns = 0;      // time 0 when there is no summary
  std::vector<PageEvent> events;  // the events lane, in seconds from time 0
  std::string generator;      // "profcpu VERSION"
  std::vector<PageSourceView> views;  // none: no switch
  size_t threads = 0;  // to compress the data on; 0: base::WorkerThreads()
};

// What writing the page took.
struct PageWriteTimes {
  double wall_s = 0;   // from the profile to the file written
  PageWriteWork work;  // the compression's tasks among it
};

// profcpu.log's line for bench/end_of_run.py: "parallel profile.html: W s
// wall, serial S s, N tasks on K threads, longest task L s, task CPU C s",
// where S is all but the compression (building the data, encoding, base64,
// the write) and the tasks are the compressed pieces (CPU time each).
std::string ParallelPageLine(const PageWriteTimes& times);

// Writes the page to `path`; `times` may be null.
absl::Status WriteProfilePage(const fold::Profile& profile, const PageSource& source,
                              const std::string& path, PageWriteTimes* times = nullptr);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_RUN_PAGE_H_
