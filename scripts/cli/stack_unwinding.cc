#include "scripts/cli/stack_unwinding.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "scripts/cli/output_dir.h"
#include "symbolize/debug_file_finder.h"

namespace profcpu::cli {

RunUnwinder::RunUnwinder(const std::string& dir, const symbolize::ProcessFiles* files,
                         const std::vector<std::string>& symbol_dirs, RunLog* log) {
  const std::string path = absl::StrCat(dir, "/", kUnwoundStacksFile);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    absl::StatusOr<std::unique_ptr<symbolize::ReplayUnwinder>> replay =
        symbolize::ReplayUnwinder::Open(path);
    if (replay.ok()) {
      replay_ = std::move(*replay);
      active_ = replay_.get();
      log->Info(absl::StrCat("DWARF stacks replayed from ", kUnwoundStacksFile));
    } else {
      log->Warn(absl::StrCat("ignoring ", path, ": ", replay.status().message()));
    }
    return;
  }
  if (files == nullptr) return;
  symbolize::DwarfUnwinderOptions options;
  std::vector<std::string> warnings;
  options.debug_roots = symbolize::OpenDebugSearchRoots("/", symbol_dirs, &warnings);
  for (const std::string& w : warnings) log->Warn(w);
  dwarf_ = std::make_unique<symbolize::DwarfUnwinder>(files, std::move(options));
  saving_ = std::make_unique<symbolize::SavingUnwinder>(dwarf_.get(), path);
  active_ = saving_.get();
}

RunUnwinder::~RunUnwinder() = default;

void RunUnwinder::Finish(const fold::RecordingSummary& summary, RunLog* log) {
  if (saving_ != nullptr) {
    absl::Status saved = saving_->Finish();
    if (!saved.ok()) {
      log->Warn(absl::StrCat("the unwound DWARF stacks could not be kept (", saved.message(),
                             "); postprocess elsewhere will show only their sampled frames"));
    }
  }
  if (dwarf_ != nullptr) {
    std::vector<std::string> warnings;
    dwarf_->TakeWarnings(&warnings);
    for (const std::string& w : warnings) log->Warn(w);
    const symbolize::DwarfUnwindStats& stats = dwarf_->stats();
    if (stats.stacks > 0) {
      log->Info(absl::StrCat("unwound ", stats.stacks, " DWARF stacks (", stats.frames,
                             " frames): ", stats.truncated, " stopped early (", stats.stack_exhausted,
                             " ran past the copied stack, ", stats.frame_limit,
                             " hit the frame limit)"));
    }
  }
  if (replay_ != nullptr && !replay_->warning().empty()) log->Warn(replay_->warning());
  if (summary.dwarf_not_unwound > 0) {
    log->Warn(absl::StrCat(summary.dwarf_not_unwound,
                           " DWARF samples could not be unwound (no saved stacks and the "
                           "target's files are not here): they show only their sampled frame"));
  }
  if (summary.dwarf_stacks > 0 && summary.dwarf_truncated * 10 > summary.dwarf_stacks) {
    log->Warn(absl::StrCat(summary.dwarf_truncated, " of ", summary.dwarf_stacks,
                           " DWARF stacks were cut short; a larger -callgraph dwarf,BYTES copies "
                           "more stack per sample"));
  }
}

}  // namespace profcpu::cli
