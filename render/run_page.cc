#include "render/run_page.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "base/stage_times.h"
#include "base/status_macros.h"
#include "render/palette.h"
#include "render/profile_page_data.h"

namespace profcpu::render {
namespace {

PageMeta MetaFor(const PageSource& source) {
  PageMeta meta;
  if (!source.graph.title.empty()) meta.title = source.graph.title;
  meta.subtitle = source.graph.subtitle;
  meta.palette = std::string(PaletteName(source.graph.palette));
  meta.cool_subtree = source.graph.cool_subtree;
  meta.generator = source.generator;
  if (const fold::RecordingSummary* summary = source.summary) {
    meta.mode = summary->mode;
    if (summary->microseconds) meta.count_name = "microseconds";
    meta.start_realtime_ns = summary->header.start_realtime_ns;
    if (summary->finish && summary->finish->end_time_ns > summary->header.start_time_ns) {
      meta.duration_s =
          static_cast<double>(summary->finish->end_time_ns - summary->header.start_time_ns) / 1e9;
    }
    meta.time_resolution_s = static_cast<double>(summary->header.counted_interval_ns) / 1e9;
  }
  meta.events = source.events;
  return meta;
}

}  // namespace

std::string ParallelPageLine(const PageWriteTimes& times) {
  const archive::DeflateWork& deflate = times.work.deflate;
  base::ParallelStage stage;
  stage.wall = times.wall_s;
  stage.serial = std::max(0.0, times.wall_s - deflate.wall_s);
  stage.tasks = static_cast<int>(deflate.tasks);
  stage.threads = static_cast<int>(deflate.threads);
  stage.longest_task = deflate.longest_task_s;
  stage.task_cpu = deflate.task_cpu_s;
  return base::ParallelStageLine("profile.html", stage);
}

absl::Status WriteProfilePage(const fold::Profile& profile, const PageSource& source,
                              const std::string& path, PageWriteTimes* times) {
  const auto start = std::chrono::steady_clock::now();
  PageDataOptions options;
  options.fold = source.fold;
  options.palette = source.graph.palette;
  options.hash_colors = source.graph.hash_colors;
  options.start_ns = source.summary ? source.summary->header.start_time_ns : source.start_ns;
  PageCompression compression;
  compression.threads =
      source.threads != 0 ? source.threads : static_cast<size_t>(base::WorkerThreads());
  options.threads = compression.threads;
  std::vector<PageView> views;
  for (const PageSourceView& source_view : source.views) {
    PageDataOptions view_options = options;
    view_options.fold.weight_by_period = true;  // bytes, microseconds, throws
    view_options.fold.event_filter.clear();
    PageView& view = views.emplace_back();
    view.key = source_view.key;
    view.label = source_view.label;
    view.count_name = source_view.count_name;
    view.description = source_view.description;
    view.data = BuildPageData(*source_view.profile, view_options);
  }
  PageWriteTimes unused;
  if (times == nullptr) times = &unused;
  PROFCPU_RETURN_IF_ERROR(WriteProfilePageFile(BuildPageData(profile, options), MetaFor(source),
                                               views, compression, path, &times->work));
  times->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return absl::OkStatus();
}

}  // namespace profcpu::render
