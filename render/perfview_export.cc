#include "render/perfview_export.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "archive/archive.h"
#include "base/status_macros.h"
#include "fold/perf_script_writer.h"
#include "fold/perfview_gaps.h"

namespace profcpu::render {

std::string PerfViewArchiveName(const std::string& dir) {
  absl::string_view name = dir;
  while (absl::ConsumeSuffix(&name, "/")) {
  }
  const size_t slash = name.rfind('/');
  if (slash != absl::string_view::npos) name.remove_prefix(slash + 1);
  if (name.empty() || name == "." || name == "..") name = "profcpu";
  return absl::StrCat(name, ".trace.zip");
}

absl::StatusOr<std::string> WritePerfViewExport(const std::string& dir,
                                                const fold::RecordingSummary& summary,
                                                const fold::Profile& profile, base::RunLog* log) {
  const std::string zip_name = PerfViewArchiveName(dir);
  const std::string folder = zip_name.substr(0, zip_name.size() - 4);  // NAME.trace
  const std::string text = absl::StrCat(dir, "/.", folder, ".perf.data.txt.tmp");
  fold::PerfScriptWriteOptions options{fold::PerfScriptHeaderFor(summary)};
  options.perfview_spacing_ns = fold::PerfViewSampleSpacingNs(summary.header);
  options.header->extra.push_back(
      {"for PerfView", "'unprofiled' (pid 0) samples end each sample's time one interval "
                       "later on its CPU (PerfView weighs samples by time, not period)"});
  absl::Status status = fold::WritePerfScriptFile(profile, options, text);
  if (status.ok()) {
    status = archive::WriteArchive(absl::StrCat(dir, "/", zip_name), archive::ArchiveFormat::kZip,
                                   {{absl::StrCat(folder, "/perf.data.txt"), text}});
  }
  std::remove(text.c_str());
  PROFCPU_RETURN_IF_ERROR(status);
  log->Info(absl::StrCat("wrote ", zip_name, " for PerfView"));
  if (summary.weighted) {
    // Entries that stand for several samples or for time off the CPU
    // (BPF counts, -mode offcpu|wall) weigh one interval each there.
    log->Warn(absl::StrCat("PerfView weighs every entry of ", zip_name,
                           " as one sample: with this recording's weighted entries (",
                           fold::ModeDescription(summary),
                           ") its shares are not folded_stacks.out's"));
  }
  return zip_name;
}

}  // namespace profcpu::render
