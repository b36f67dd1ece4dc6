// The last steps every command shares once the outputs exist: metadata.json,
// then prof.tar.gz holding the folder's files.
#ifndef PROFCPU_SCRIPTS_CLI_FINISH_RUN_H_
#define PROFCPU_SCRIPTS_CLI_FINISH_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/run_log.h"
#include "scripts/cli/pipeline.h"

namespace profcpu::cli {

// Logs the run's closing line (fold::SummaryLine), writes metadata.json and,
// if `write_archive`, prof.tar.gz with the recording, the snapshot, the JIT
// copies, the exports, the metadata and the log (closed first so it is
// complete inside the archive), then the outputs (run_archive.h: that order
// lets postprocess stop unpacking early). Returns the closing line.
absl::StatusOr<std::string> FinishRun(const std::string& dir, const PipelineResult& result,
                                      bool write_archive, base::RunLog* log);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_FINISH_RUN_H_
