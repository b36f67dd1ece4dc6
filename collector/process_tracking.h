// What a collection keeps of each process it sees, while the process lives:
// how it sees itself, the files it maps (for symbolization after it exits),
// the perf map it writes; and, for a process running before collection
// began, the records sampling would have given had it watched from the start.
#ifndef PROFCPU_COLLECTOR_PROCESS_TRACKING_H_
#define PROFCPU_COLLECTOR_PROCESS_TRACKING_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collector/perf_map_tailer.h"
#include "collector/process_roots.h"
#include "collector/record_orderer.h"
#include "recording/records.h"

namespace profcpu::collector {

// The pids it has in each namespace, its command line and its JIT directory,
// as /proc says at `time_ns`; what cannot be read stays empty (the pid alone).
recording::ProcessInfo DescribeProcess(pid_t pid, uint64_t time_ns);

// Keeps the executable file `mmap` maps open from the moment profcpu sees
// the mapping (RootDir::Keep): symbolization runs after collection, when a
// container that exited has lost its mounts, and a deploy may have replaced
// the file. Anonymous memory, JIT code and [vdso] map no file.
void KeepMappedFile(const recording::Mmap& mmap, ProcessRoots* roots);

// When `mmap` maps JIT code, starts copying its process's perf map, named as
// the process names it: <its JIT directory>/perf-<the pid it sees>.map.
// `processes`: those described so far (the newest of a pid is used). No-op
// without a tailer, or when the tailer knows the process already.
void TailPerfMapOf(const recording::Mmap& mmap, const std::vector<recording::ProcessInfo>& processes,
                   uint64_t now_ns, ProcessRoots* roots, PerfMapTailer* tailer);

// The state of process `pid`, running before collection began, as records
// stamped `time_ns`: how it sees itself (also appended to `processes`), its
// thread names and its executable mappings, whose files are kept and perf
// maps tailed as sampled mappings' are. A process whose mappings cannot be
// read gets a line in `warnings`.
void SynthesizeExistingProcess(pid_t pid, uint64_t time_ns, RecordOrderer* orderer,
                               std::vector<recording::ProcessInfo>* processes,
                               std::vector<std::string>* warnings, ProcessRoots* roots,
                               PerfMapTailer* tailer);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PROCESS_TRACKING_H_
