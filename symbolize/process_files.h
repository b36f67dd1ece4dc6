// Where the symbolizer finds the profiled processes' files: their roots,
// namespace pids and JIT directories (rooted_process_files.h implements it
// from what the collection opened).
#ifndef PROFCPU_SYMBOLIZE_PROCESS_FILES_H_
#define PROFCPU_SYMBOLIZE_PROCESS_FILES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/rooted_open.h"

namespace profcpu::symbolize {

// Where the symbolizer finds a process's files. Implemented by the command
// (which knows the roots it opened during collection).
class ProcessFiles {
 public:
  virtual ~ProcessFiles() = default;
  // The root to open this process's files under, or nullptr if unavailable
  // (a recording read on another machine).
  virtual std::shared_ptr<base::RootDir> RootFor(uint32_t pid) const = 0;
  // The pid the process sees itself as (innermost PID namespace); names its
  // perf map (/tmp/perf-NSPID.map).
  virtual uint32_t NamespacePid(uint32_t pid) const = 0;
  // Where, inside its root, the process writes perf-PID.map and jit-PID.dump:
  // /tmp unless its environment said otherwise (DOTNET_PerfMapJitDumpPath).
  virtual std::string JitDirectory(uint32_t /*pid*/) const { return "/tmp"; }
  // True when the collector looked for the process's perf map while it ran
  // (every 100 ms, collector/perf_map_tailer.h) and never found one: a hint
  // can then say so rather than guess.
  virtual bool PerfMapNeverSeen(uint32_t /*pid*/) const { return false; }
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_PROCESS_FILES_H_
