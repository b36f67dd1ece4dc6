// Which user-stack unwinder a pipeline run gives fold's replay for
// -callgraph dwarf samples: the run folder's unwound_stacks.bin when it has
// one (postprocess anywhere replays the sidecar's result), else the DWARF
// unwinder over the target's files (right after collection), whose result
// is saved there. Neither for frame-pointer recordings: no file is made.
#ifndef PROFCPU_SYMBOLIZE_RUN_UNWINDER_H_
#define PROFCPU_SYMBOLIZE_RUN_UNWINDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/run_log.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/process_files.h"
#include "symbolize/unwound_stacks.h"

namespace profcpu::symbolize {

// What the replay saw of -callgraph dwarf samples (fold's RecordingSummary
// counts them): stacks to unwind, unwinds cut short, samples left unwound.
struct DwarfReplayCounts {
  uint64_t stacks = 0;
  uint64_t truncated = 0;
  uint64_t not_unwound = 0;
};

class RunUnwinder {
 public:
  // `files` null: the target's files are not reachable (postprocess).
  RunUnwinder(const std::string& dir, const ProcessFiles* files,
              const std::vector<std::string>& symbol_dirs, base::RunLog* log);
  ~RunUnwinder();

  // For fold::BuildOptions::unwinder; null when nothing can unwind.
  UserStackUnwinder* get() const { return active_; }

  // After the replay: closes the saved file and logs what happened.
  void Finish(const DwarfReplayCounts& summary, base::RunLog* log);

 private:
  std::unique_ptr<ReplayUnwinder> replay_;
  std::unique_ptr<DwarfUnwinder> dwarf_;
  std::unique_ptr<SavingUnwinder> saving_;
  UserStackUnwinder* active_ = nullptr;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_RUN_UNWINDER_H_
