#include "scripts/cli/finish_run.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "archive/run_archive.h"
#include "base/file_io.h"
#include "base/status_macros.h"
#include "fold/dotnet_event_profiles.h"
#include "fold/dotnet_runtime_events.h"
#include "recording/run_folder.h"
#include "render/profile_page_writer.h"
#include "scripts/cli/metadata.h"

namespace profcpu::cli {

absl::StatusOr<std::string> FinishRun(const std::string& dir, const PipelineResult& result,
                                      bool write_archive, base::RunLog* log) {
  std::string summary = fold::SummaryLine(result.summary, result.unknown_frames);
  // The .NET runtime's events, as the pipeline read them from the saved streams.
  const fold::DotnetEventsOutput& dotnet_events = result.dotnet_events;
  if (!dotnet_events.summaries.empty()) {
    absl::StrAppend(&summary, "; .NET: ", fold::DotnetEventsHeadlines(dotnet_events));
  }
  log->Info(summary);
  std::vector<std::string> files = {recording::kFlameGraphFile, recording::kFoldedFile,  recording::kPerfScriptFile,
                                    recording::kRecordingFile,  recording::kSymbolsFile, recording::kMetadataFile, recording::kLogFile};
  // -callgraph dwarf and fp+cfi runs keep the stacks unwound where the
  // target's files were.
  struct stat unwound;
  if (::stat(absl::StrCat(dir, "/", recording::kUnwoundStacksFile).c_str(), &unwound) == 0) {
    files.push_back(recording::kUnwoundStacksFile);
  }
  if (std::find(result.files_written.begin(), result.files_written.end(),
                render::kProfilePageFile) != result.files_written.end()) {
    files.push_back(render::kProfilePageFile);
  }
  // The .NET event profiles' folded stacks, those written (kinds with samples).
  for (const fold::DotnetEventProfile& profile : result.dotnet_event_stacks.profiles) {
    const char* name = fold::DotnetEventStacksFile(profile.kind);
    if (std::find(result.files_written.begin(), result.files_written.end(), name) !=
        result.files_written.end()) {
      files.push_back(name);
    }
  }
  files.insert(files.end(), result.jit_files.begin(), result.jit_files.end());
  files.insert(files.end(), result.exports.begin(), result.exports.end());
  files.insert(files.end(), dotnet_events.files.begin(), dotnet_events.files.end());
  if (write_archive) files.push_back(recording::kArchiveFile);

  RunFacts facts;
  facts.summary = &result.summary;
  facts.symbols = &result.symbols;
  facts.unknown_frames = &result.unknown_frames;
  facts.jit_frame_sources = &result.jit_frame_sources;
  facts.warnings = log->warnings();
  facts.files = files;
  facts.dotnet_events = &dotnet_events.summaries;
  facts.dotnet_event_stacks = &result.dotnet_event_stacks;
  facts.unknown_modules = &result.unknown_modules;
  facts.symbol_fetch = &result.symbol_fetch;
  PROFCPU_RETURN_IF_ERROR(
      base::WriteFile(absl::StrCat(dir, "/", recording::kMetadataFile), FormatMetadataJson(facts)));
  if (write_archive) {
    log->Info(absl::StrCat("writing ", recording::kArchiveFile));
    log->Close();
    std::vector<archive::ArchiveEntry> entries;
    for (const std::string& name : archive::ArchiveOrder(files)) {
      if (name != recording::kArchiveFile) entries.push_back({name, absl::StrCat(dir, "/", name)});
    }
    PROFCPU_RETURN_IF_ERROR(archive::WriteTarGz(absl::StrCat(dir, "/", recording::kArchiveFile), entries));
  }
  return summary;
}

}  // namespace profcpu::cli
