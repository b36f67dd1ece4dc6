// Which user-stack unwinder a pipeline run gives fold's replay for
// -callgraph dwarf samples: the run folder's unwound_stacks.bin when it has
// one (postprocess anywhere replays the sidecar's result), else the DWARF
// unwinder over the target's files (right after collection), whose result
// is saved there. Neither for frame-pointer recordings: no file is made.
#ifndef PROFCPU_SCRIPTS_CLI_STACK_UNWINDING_H_
#define PROFCPU_SCRIPTS_CLI_STACK_UNWINDING_H_

#include <memory>
#include <string>
#include <vector>

#include "fold/profile_builder.h"
#include "scripts/cli/run_log.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/symbolizer.h"
#include "symbolize/unwound_stacks.h"

namespace profcpu::cli {

class RunUnwinder {
 public:
  // `files` null: the target's files are not reachable (postprocess).
  RunUnwinder(const std::string& dir, const symbolize::ProcessFiles* files,
              const std::vector<std::string>& symbol_dirs, RunLog* log);
  ~RunUnwinder();

  // For fold::BuildOptions::unwinder; null when nothing can unwind.
  symbolize::UserStackUnwinder* get() const { return active_; }

  // After the replay: closes the saved file and logs what happened.
  void Finish(const fold::RecordingSummary& summary, RunLog* log);

 private:
  std::unique_ptr<symbolize::ReplayUnwinder> replay_;
  std::unique_ptr<symbolize::DwarfUnwinder> dwarf_;
  std::unique_ptr<symbolize::SavingUnwinder> saving_;
  symbolize::UserStackUnwinder* active_ = nullptr;
};

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_STACK_UNWINDING_H_
