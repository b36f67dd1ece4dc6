// The run folder's copies of the profiled processes' JIT symbol files
// (jit/perf-PID.map, jit/jit-PID.dump, jit/perfinfo-PID.map), which the
// archive keeps so postprocess elsewhere names JIT frames from the very same
// bytes the collecting machine used.
#ifndef PROFCPU_SCRIPTS_CLI_JIT_FILES_H_
#define PROFCPU_SCRIPTS_CLI_JIT_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "scripts/cli/run_log.h"
#include "symbolize/jit_sources.h"
#include "symbolize/symbolizer.h"

namespace profcpu::cli {

// The symbolizer's source of JIT files: a file is read from the run folder's
// copy when there is one (postprocess, anywhere); otherwise, when the
// target's files are reachable (right after collection), it is copied from
// the process's root into the run folder first and the copy is read. A
// runtime may still be appending: the copy is what counts, so both passes
// agree.
class ArchivedJitFiles : public symbolize::JitFileSource {
 public:
  // `target` may be null (postprocess): then only existing copies are read.
  ArchivedJitFiles(std::string run_dir, const symbolize::ProcessFiles* target, RunLog* log);

  absl::StatusOr<base::UniqueFd> Open(uint32_t pid, symbolize::JitFileKind kind,
                                      const std::string& path) override;

 private:
  std::string run_dir_;
  symbolize::TargetJitFiles target_;
  bool have_target_;
  RunLog* log_;
};

// The copies in `run_dir`'s jit/ folder, as paths relative to `run_dir`.
std::vector<std::string> ListJitFiles(const std::string& run_dir);

// Kept for callers from before copies were made on demand: lists what the
// pipeline copied (the other arguments are unused).
std::vector<std::string> CopyJitFiles(const std::string& run_dir, const std::vector<uint32_t>& pids,
                                      const symbolize::ProcessFiles& files, RunLog* log);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_JIT_FILES_H_
