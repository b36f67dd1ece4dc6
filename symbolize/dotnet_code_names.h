// Names managed frames from the .NET runtimes' own method events saved in the
// run folder (dotnet/PID.nettrace, managed_code_events.h)
// for processes that left no perf map or jitdump: -perfmap off, or a target
// whose /tmp could not be written. Read lazily, only for such a process.
#ifndef PROFCPU_SYMBOLIZE_DOTNET_CODE_NAMES_H_
#define PROFCPU_SYMBOLIZE_DOTNET_CODE_NAMES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "base/run_log.h"
#include "symbolize/jit_sources.h"

namespace profcpu::symbolize {

class DotnetCodeNames : public JitCodeEvents {
 public:
  DotnetCodeNames(std::string run_dir, base::RunLog* log)
      : run_dir_(std::move(run_dir)), log_(log) {}

  std::unique_ptr<Jitdump> CodeOf(uint32_t pid, std::string* described) override;

 private:
  std::string run_dir_;
  base::RunLog* log_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DOTNET_CODE_NAMES_H_
