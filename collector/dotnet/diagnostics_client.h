// Finds a .NET process's diagnostics socket and sends it one command.
//
// The runtime listens on $TMPDIR/dotnet-diagnostic-{pid}-{key}-socket, with
// the pid it sees itself as and key = its start time (field 22 of
// /proc/PID/stat) (dotnet/diagnostics ipc-protocol.md). The socket is looked
// up inside the target's own root (/proc/PID/root), so this works across
// mount namespaces with no shared /tmp, and it is opened by O_PATH inside
// that root and connected through /proc/self/fd: a symlink planted in the
// target's /tmp cannot point profcpu at one of the host's sockets.
#ifndef PROFCPU_COLLECTOR_DOTNET_DIAGNOSTICS_CLIENT_H_
#define PROFCPU_COLLECTOR_DOTNET_DIAGNOSTICS_CLIENT_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/rooted_open.h"
#include "base/unique_fd.h"
#include "collector/dotnet/ipc_protocol.h"

namespace profcpu::collector::dotnet {

struct DiagnosticsTarget {
  pid_t pid = 0;                 // as profcpu sees it
  uint32_t namespace_pid = 0;    // as the process sees itself
  std::shared_ptr<base::RootDir> root;
  std::string socket_path;       // inside `root`
};

// NotFound when the process has no diagnostics socket (not .NET, or
// DOTNET_EnableDiagnostics=0), does not exist or has exited (a zombie), each
// said by pid; PermissionDenied naming the capability when its files cannot
// be read.
absl::StatusOr<DiagnosticsTarget> FindDiagnosticsTarget(pid_t pid,
                                                        const std::string& proc = "/proc");

// Picks the socket for `namespace_pid` among directory entry names: the one
// whose key is `start_time` if present, else the newest (largest key) not
// older than `start_time` (an older key is a dead process's leftover whose pid
// was reused). Empty if none matches.
std::string ChooseSocketName(const std::vector<std::string>& names, uint32_t namespace_pid,
                             const std::string& start_time);

struct Reply {
  ReplyHeader header;
  std::string payload;
};

// Connects to the target's diagnostics socket: opened by O_PATH inside the
// target's root, connected through /proc/self/fd; reads and writes time out
// after `timeout`. Errors say what to do (permissions, a stale socket).
absl::StatusOr<base::UniqueFd> ConnectDiagnostics(const DiagnosticsTarget& target,
                                                  absl::Duration timeout);

// Reads exactly `n` bytes of a reply, appended to *out: DeadlineExceeded when
// the runtime does not answer in time, DataLoss when it closes mid-reply.
absl::Status ReadExactly(int fd, size_t n, std::string* out);

// Writes all of `data` to a connected socket with send(MSG_NOSIGNAL): a
// runtime that closed its end is an error, never a SIGPIPE that kills profcpu.
absl::Status SendAll(int sock, absl::string_view data);

// Connects, sends one command, reads one reply (at most 1 MiB), within `timeout`.
absl::StatusOr<Reply> SendCommand(const DiagnosticsTarget& target, uint8_t command_set,
                                  uint8_t command_id, absl::string_view payload,
                                  absl::Duration timeout = absl::Seconds(5));

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_DIAGNOSTICS_CLIENT_H_
