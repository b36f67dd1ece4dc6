#include "scripts/cli/profile_page_output.h"

#include <algorithm>

#include "base/file_io.h"
#include "base/status_macros.h"
#include "render/dotnet_page_events.h"
#include "render/profile_page_data.h"
#include "render/profile_page_writer.h"
#include "scripts/cli/version.h"

namespace profcpu::cli {
namespace {

render::PageMeta MetaFor(const PageSource& source, uint64_t start_ns) {
  render::PageMeta meta;
  if (!source.graph.title.empty()) meta.title = source.graph.title;
  meta.subtitle = source.graph.subtitle;
  meta.palette = std::string(render::PaletteName(source.graph.palette));
  meta.cool_subtree = source.graph.cool_subtree;
  meta.generator = absl::StrCat("profcpu ", kProfcpuVersion);
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
  if (source.dotnet_events != nullptr) meta.events = render::PageEventsOf(*source.dotnet_events, start_ns);
  return meta;
}

}  // namespace

absl::Status WriteProfilePage(const fold::Profile& profile, const PageSource& source,
                              const std::string& path) {
  render::PageDataOptions options;
  options.fold = source.fold;
  options.palette = source.graph.palette;
  options.hash_colors = source.graph.hash_colors;
  options.start_ns = source.summary ? source.summary->header.start_time_ns : source.start_ns;
  PROFCPU_ASSIGN_OR_RETURN(
      std::string page,
      render::RenderProfilePage(render::BuildPageData(profile, options),
                                MetaFor(source, options.start_ns)));
  return base::WriteFile(path, page);
}

}  // namespace profcpu::cli
