// Reads what /proc says about a process before sampling starts: its threads,
// executable mappings, thread names, namespace pids and command line. The
// kernel only reports mappings created after a perf event is opened, so the
// existing ones are synthesized from /proc/PID/maps, as perf does.
#ifndef PROFCPU_COLLECTOR_PROC_PROC_READER_H_
#define PROFCPU_COLLECTOR_PROC_PROC_READER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "recording/records.h"

namespace profcpu::collector {

// Every process id in /proc, ascending.
std::vector<pid_t> ListProcesses(const std::string& proc = "/proc");

// Thread ids in /proc/PID/task. NotFound if the process does not exist.
absl::StatusOr<std::vector<pid_t>> ListThreads(pid_t pid, const std::string& proc = "/proc");

// Parses /proc/PID/maps text into Mmap records for executable mappings,
// stamped with `time_ns` and marked synthesized. Malformed lines are skipped.
std::vector<recording::Mmap> ParseProcMaps(absl::string_view text, pid_t pid, uint64_t time_ns);

absl::StatusOr<std::vector<recording::Mmap>> ReadProcMaps(pid_t pid, uint64_t time_ns,
                                                          const std::string& proc = "/proc");

// The thread's name (/proc/PID/task/TID/comm) without the newline.
absl::StatusOr<std::string> ReadThreadName(pid_t pid, pid_t tid,
                                           const std::string& proc = "/proc");

// Pids of the process in each nested PID namespace, outermost first
// (the NStgid line of /proc/PID/status; just {pid} on kernels without it).
std::vector<uint32_t> ParseNamespacePids(absl::string_view status_text);
absl::StatusOr<std::vector<uint32_t>> ReadNamespacePids(pid_t pid,
                                                        const std::string& proc = "/proc");

// The process a thread belongs to (the Tgid line of /proc/TID/status): the
// thread id itself for a process's main thread. /proc/TID exists for every
// thread, though only processes are listed in /proc.
absl::StatusOr<pid_t> ReadThreadGroupId(pid_t tid, const std::string& proc = "/proc");

// /proc/PID/cmdline with NULs turned into spaces (empty for kernel threads).
absl::StatusOr<std::string> ReadCommandLine(pid_t pid, const std::string& proc = "/proc");

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PROC_PROC_READER_H_
