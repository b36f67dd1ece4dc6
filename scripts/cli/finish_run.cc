#include "scripts/cli/finish_run.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "collector/base/file_io.h"
#include "collector/base/status_macros.h"
#include "scripts/cli/archive.h"
#include "scripts/cli/metadata.h"
#include "scripts/cli/output_dir.h"

namespace profcpu::cli {

absl::Status FinishRun(const std::string& dir, const PipelineResult& result,
                       const std::vector<std::string>& extra_files, bool write_archive,
                       RunLog* log) {
  std::vector<std::string> files = {kFlameGraphFile, kFoldedFile,  kPerfScriptFile,
                                    kRecordingFile,  kSymbolsFile, kMetadataFile, kLogFile};
  // -callgraph dwarf runs keep the stacks unwound where the target's files were.
  struct stat unwound;
  if (::stat(absl::StrCat(dir, "/", kUnwoundStacksFile).c_str(), &unwound) == 0) {
    files.push_back(kUnwoundStacksFile);
  }
  files.insert(files.end(), extra_files.begin(), extra_files.end());
  if (write_archive) files.push_back(kArchiveFile);

  RunFacts facts;
  facts.summary = &result.summary;
  facts.symbols = &result.symbols;
  facts.unknown_frames = &result.unknown_frames;
  facts.warnings = log->warnings();
  facts.files = files;
  PROFCPU_RETURN_IF_ERROR(
      base::WriteFile(absl::StrCat(dir, "/", kMetadataFile), FormatMetadataJson(facts)));
  if (!write_archive) return absl::OkStatus();

  log->Info(absl::StrCat("writing ", kArchiveFile));
  log->Close();
  std::vector<ArchiveEntry> entries;
  for (const std::string& name : files) {
    if (name != kArchiveFile) entries.push_back({name, absl::StrCat(dir, "/", name)});
  }
  return WriteTarGz(absl::StrCat(dir, "/", kArchiveFile), entries);
}

std::string SummaryLine(const PipelineResult& result) {
  const fold::RecordingSummary& s = result.summary;
  std::string line = absl::StrCat(s.samples, " samples");
  uint64_t lost = s.lost_ring_buffer + s.lost_dropped + s.lost_bpf_ring_buffer + s.lost_bpf_map_full;
  absl::StrAppend(&line, ", ", lost, " lost");
  if (s.offcpu_samples > 0) {
    absl::StrAppend(&line, " (", s.offcpu_samples, " off-CPU, ",
                    absl::SixDigits(static_cast<double>(s.offcpu_ns) / 1e9), " s blocked)");
  }
  if (s.lost_stacks > 0) absl::StrAppend(&line, ", ", s.lost_stacks, " stacks lost");
  if (s.truncated_stacks > 0) absl::StrAppend(&line, ", ", s.truncated_stacks, " truncated stacks");
  line.append(DescribeUnknownFrames(result.unknown_frames));
  return line;
}

}  // namespace profcpu::cli
