// The last steps every command shares once the outputs exist: metadata.json,
// then prof.tar.gz holding the folder's files.
#ifndef PROFCPU_SCRIPTS_CLI_FINISH_RUN_H_
#define PROFCPU_SCRIPTS_CLI_FINISH_RUN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "scripts/cli/pipeline.h"
#include "scripts/cli/run_log.h"

namespace profcpu::cli {

// Writes metadata.json and, if `write_archive`, prof.tar.gz with the outputs,
// the recording, the snapshot, `extra_files` (relative paths), the metadata
// and the log (closed first so it is complete inside the archive).
absl::Status FinishRun(const std::string& dir, const PipelineResult& result,
                       const std::vector<std::string>& extra_files, bool write_archive,
                       RunLog* log);

// One line for stderr: samples, losses, unknown frames.
std::string SummaryLine(const PipelineResult& result);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_FINISH_RUN_H_
