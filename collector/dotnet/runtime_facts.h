// What the .NET sessions of a collection learn about each runtime (its
// version, how its perf maps came to be on, what its event stream kept and
// dropped), gathered per process while they run and written into the
// recording when collection stops (recording::DotnetRuntime), so
// metadata.json says it after postprocess of the archive too.
#ifndef PROFCPU_COLLECTOR_DOTNET_RUNTIME_FACTS_H_
#define PROFCPU_COLLECTOR_DOTNET_RUNTIME_FACTS_H_

#include <sys/types.h>

#include <map>
#include <vector>

#include "collector/dotnet/diagnostics_client.h"
#include "recording/records.h"

namespace profcpu::collector::dotnet {

class RuntimeFacts {
 public:
  // The facts of `pid`, created empty on first use.
  recording::DotnetRuntime& Of(pid_t pid);
  // Asks the runtime its version (ProcessInfo2) unless already known; a
  // runtime that does not answer keeps it empty.
  void NoteVersion(const DiagnosticsTarget& target);
  // Every process's facts stamped with `time_ns`, in pid order.
  std::vector<recording::DotnetRuntime> Records(uint64_t time_ns) const;

 private:
  std::map<pid_t, recording::DotnetRuntime> by_pid_;
};

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_RUNTIME_FACTS_H_
