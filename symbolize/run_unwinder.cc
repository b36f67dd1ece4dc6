#include "symbolize/run_unwinder.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "recording/run_folder.h"
#include "symbolize/debug_file_finder.h"

namespace profcpu::symbolize {

RunUnwinder::RunUnwinder(const std::string& dir, const ProcessFiles* files,
                         const std::vector<std::string>& symbol_dirs, base::RunLog* log) {
  const std::string path = absl::StrCat(dir, "/", recording::kUnwoundStacksFile);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    absl::StatusOr<std::unique_ptr<ReplayUnwinder>> replay =
        ReplayUnwinder::Open(path);
    if (replay.ok()) {
      replay_ = std::move(*replay);
      active_ = replay_.get();
      log->Info(absl::StrCat("DWARF stacks replayed from ", recording::kUnwoundStacksFile));
    } else {
      log->Warn(absl::StrCat("ignoring ", path, ": ", replay.status().message()));
    }
    return;
  }
  if (files == nullptr) return;
  DwarfUnwinderOptions options;
  std::vector<std::string> warnings;
  options.debug_roots = OpenDebugSearchRoots("/", symbol_dirs, DebuginfodClientCacheDir(), &warnings);
  for (const std::string& w : warnings) log->Warn(w);
  dwarf_ = std::make_unique<DwarfUnwinder>(files, std::move(options));
  saving_ = std::make_unique<SavingUnwinder>(dwarf_.get(), path);
  active_ = saving_.get();
}

RunUnwinder::~RunUnwinder() = default;

void RunUnwinder::Finish(const DwarfReplayCounts& summary, base::RunLog* log) {
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
    const DwarfUnwindStats& stats = dwarf_->stats();
    const LeafRepairStats& leaf = stats.leaf;
    if (leaf.samples > 0) {
      log->Info(absl::StrCat(
          "leaf repair (-callgraph fp+cfi): ", leaf.samples, " chains, ", leaf.repaired,
          " repaired (", leaf.frames_added, " frames put back), ", leaf.unchanged,
          " whole already, ", leaf.cfi_whole, " rooted by CFI past a frame-pointer chain that "
          "was garbage, ", leaf.cfi_only, " without a frame record (CFI frames only, cut "
          "where the stack copy ends); left as "
          "they were: ", leaf.no_splice, " CFI did not reach the frame-pointer chain, ",
          leaf.mismatch, " disagreed with it, ", leaf.outside_mappings,
          " pointed outside the process's code, ", leaf.no_registers, " without registers, ",
          leaf.no_cfi, " without an unwinding session"));
    }
    if (stats.stacks > 0) {
      log->Info(absl::StrCat("unwound ", stats.stacks, " DWARF stacks (", stats.frames,
                             " frames): ", stats.truncated, " stopped early (", stats.stack_exhausted,
                             " ran past the copied stack, ", stats.frame_limit,
                             " hit the frame limit)"));
    }
  }
  if (replay_ != nullptr && !replay_->warning().empty()) log->Warn(replay_->warning());
  if (summary.not_unwound > 0) {
    log->Warn(absl::StrCat(summary.not_unwound,
                           " DWARF samples could not be unwound (no saved stacks and the "
                           "target's files are not here): they show only their sampled frame"));
  }
  if (summary.stacks > 0 && summary.truncated * 10 > summary.stacks) {
    log->Warn(absl::StrCat(summary.truncated, " of ", summary.stacks,
                           " DWARF stacks were cut short; a larger -callgraph dwarf,BYTES copies "
                           "more stack per sample"));
  }
}

}  // namespace profcpu::symbolize
