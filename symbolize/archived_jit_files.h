// The run folder's copies of the profiled processes' JIT symbol files
// (jit/perf-PID.map, jit/jit-PID.dump, jit/perfinfo-PID.map), which the
// archive keeps so postprocess elsewhere names JIT frames from the very same
// bytes the collecting machine used.
#ifndef PROFCPU_SYMBOLIZE_ARCHIVED_JIT_FILES_H_
#define PROFCPU_SYMBOLIZE_ARCHIVED_JIT_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/run_log.h"
#include "symbolize/jit_sources.h"
#include "symbolize/process_files.h"

namespace profcpu::symbolize {

// The symbolizer's source of JIT files: a file is read from the run folder's
// copy when there is one (postprocess, anywhere); otherwise, when the
// target's files are reachable (right after collection), it is copied from
// the process's root into the run folder first and the copy is read. A
// runtime may still be appending: the copy is what counts, so both passes
// agree.
class ArchivedJitFiles : public JitFileSource {
 public:
  // `target` may be null (postprocess): then only existing copies are read.
  // Without `keep_copies` (a run folder thrown away after use, as the fleet
  // agent's windows are), a file with no copy yet is read in place in the
  // target's root: no copy of a jitdump that grows with uptime is written
  // every run.
  ArchivedJitFiles(std::string run_dir, const ProcessFiles* target, base::RunLog* log,
                   bool keep_copies = true);

  absl::StatusOr<base::UniqueFd> Open(uint32_t pid, JitFileKind kind,
                                      const std::string& path) override;

 private:
  std::string run_dir_;
  TargetJitFiles target_;
  bool have_target_;
  base::RunLog* log_;
  bool keep_copies_;
};

// The copies in `run_dir`'s jit/ folder, as paths relative to `run_dir`.
std::vector<std::string> ListJitFiles(const std::string& run_dir);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_ARCHIVED_JIT_FILES_H_
