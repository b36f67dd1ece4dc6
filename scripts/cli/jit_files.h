// Copies the perf maps of processes with JIT frames into the run folder
// (jit/perf-PID.map), so the archive keeps the evidence the symbols came from.
#ifndef PROFCPU_SCRIPTS_CLI_JIT_FILES_H_
#define PROFCPU_SCRIPTS_CLI_JIT_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "scripts/cli/run_log.h"
#include "symbolize/symbolizer.h"

namespace profcpu::cli {

// Returns the paths written, relative to `run_dir`.
std::vector<std::string> CopyJitFiles(const std::string& run_dir, const std::vector<uint32_t>& pids,
                                      const symbolize::ProcessFiles& files, RunLog* log);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_JIT_FILES_H_
