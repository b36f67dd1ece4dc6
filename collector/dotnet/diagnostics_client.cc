#include "collector/dotnet/diagnostics_client.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "base/unique_fd.h"
#include "collector/proc/proc_reader.h"
#include "collector/proc/process_environment.h"

namespace profcpu::collector::dotnet {
namespace {

constexpr size_t kMaxReplyBytes = 1 << 20;

// The fields of /proc/PID/stat after the comm, from field 3 (the state) on;
// empty when unreadable.
std::vector<std::string> StatFields(pid_t pid, const std::string& proc) {
  auto stat = base::ReadFileBounded(absl::StrCat(proc, "/", pid, "/stat"), 4096);
  if (!stat.ok()) return {};
  // The comm (field 2) may hold spaces and parentheses: count from the last ')'.
  size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 > stat->size()) return {};
  return absl::StrSplit(absl::string_view(*stat).substr(close + 2), ' ');
}

// Field 22 of /proc/PID/stat: the process's start time, the socket's key.
std::string StartTime(const std::vector<std::string>& stat) {
  return stat.size() > 19 ? stat[19] : "";
}

}  // namespace

std::string ChooseSocketName(const std::vector<std::string>& names, uint32_t namespace_pid,
                             const std::string& start_time) {
  std::string prefix = absl::StrCat("dotnet-diagnostic-", namespace_pid, "-");
  uint64_t started = 0;
  const bool start_known = !start_time.empty() && absl::SimpleAtoi(start_time, &started);
  std::string best;
  uint64_t best_key = 0;
  for (const std::string& name : names) {
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, prefix) || !absl::ConsumeSuffix(&rest, "-socket")) continue;
    if (start_known && rest == start_time) return name;
    uint64_t key;
    if (!absl::SimpleAtoi(rest, &key)) continue;
    // A runtime killed before it could unlink its socket leaves it behind, and
    // a later process can get the same pid: such a socket's key is the older
    // process's start time, before ours. Connecting to it would fail, or
    // reach nothing, while our runtime is still starting.
    if (start_known && key < started) continue;
    if (best.empty() || key > best_key) {
      best = name;
      best_key = key;
    }
  }
  return best;
}

absl::StatusOr<DiagnosticsTarget> FindDiagnosticsTarget(pid_t pid, const std::string& proc) {
  DiagnosticsTarget target;
  target.pid = pid;
  auto ns_pids = ReadNamespacePids(pid, proc);
  if (absl::IsNotFound(ns_pids.status())) {
    return absl::NotFoundError(absl::StrCat("no process with pid ", pid));
  }
  if (!ns_pids.ok()) return ns_pids.status();
  const std::vector<std::string> stat = StatFields(pid, proc);
  // A zombie keeps its pid but has no memory, files or root: nothing to ask.
  if (!stat.empty() && (stat[0] == "Z" || stat[0] == "X")) {
    // Field 4: the parent that has not reaped it yet.
    const std::string parent = stat.size() > 1 ? absl::StrCat(" (pid ", stat[1], ")") : "";
    return absl::NotFoundError(absl::StrCat("process ", pid, " has exited: it is a zombie its "
                                            "parent", parent, " has not reaped yet, with no .NET "
                                            "runtime left to ask"));
  }
  target.namespace_pid = ns_pids->back();
  auto root = base::RootDir::Open(absl::StrCat(proc, "/", pid, "/root"));
  if (!root.ok()) {
    if (absl::IsPermissionDenied(root.status())) {
      // ptrace access (kernel/ptrace.c, __ptrace_may_access): same uids are not
      // enough when the target's permitted capabilities exceed ours.
      return absl::PermissionDeniedError(absl::StrCat(
          root.status().message(),
          "; reading a process that runs as another user, or holds capabilities profcpu "
          "lacks (an app container's), needs CAP_SYS_PTRACE"));
    }
    return root.status();
  }
  target.root = *root;
  auto env = ProcessEnvironment::Read(pid, proc);
  if (absl::IsPermissionDenied(env.status())) {
    // /proc/PID/environ and /proc/PID/fd belong to the process's uid, mode
    // 0400 and 0500 (fs/proc/base.c), and the runtime's socket is its owner's
    // alone: even root needs CAP_DAC_OVERRIDE (a sidecar that dropped it).
    return absl::PermissionDeniedError(absl::StrCat(
        env.status().message(), "; process ", pid,
        " runs as another user: profcpu needs CAP_DAC_OVERRIDE to read its /proc files and "
        "connect to its .NET diagnostics socket"));
  }
  std::string tmpdir = env.ok() ? env->TempDirectory() : "/tmp";
  auto names = target.root->ListDirectory(tmpdir);
  if (!names.ok()) return names.status();
  std::string name = ChooseSocketName(*names, target.namespace_pid, StartTime(stat));
  if (name.empty()) {
    return absl::NotFoundError(absl::StrCat("process ", pid, " has no .NET diagnostics socket in ",
                                            tmpdir));
  }
  target.socket_path = absl::StrCat(tmpdir, "/", name);
  return target;
}

absl::Status ReadExactly(int fd, size_t n, std::string* out) {
  size_t start = out->size();
  out->resize(start + n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, out->data() + start + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return absl::DeadlineExceededError("the .NET runtime did not answer in time");
    }
    if (r < 0) return base::ErrnoStatus(errno, "read from the diagnostics socket");
    if (r == 0) return absl::DataLossError("the .NET runtime closed the connection mid-reply");
    got += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

absl::Status SendAll(int sock, absl::string_view data) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = ::send(sock, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoStatus(errno, "send to the diagnostics socket");
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<base::UniqueFd> ConnectDiagnostics(const DiagnosticsTarget& target,
                                                  absl::Duration timeout) {
  auto socket_file = target.root->OpenPath(target.socket_path);
  if (!socket_file.ok()) return socket_file.status();
  struct stat st;
  if (::fstat(socket_file->get(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(target.socket_path, " in process ", target.pid, "'s root is not a socket"));
  }
  base::UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) return base::ErrnoStatus(errno, "socket");
  timeval tv = absl::ToTimeval(timeout);
  ::setsockopt(sock.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(sock.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  std::string via = absl::StrCat("/proc/self/fd/", socket_file->get());
  std::memcpy(address.sun_path, via.c_str(), via.size() + 1);
  if (::connect(sock.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    int err = errno;
    std::string what = absl::StrCat("connect to ", target.socket_path, " of process ", target.pid);
    if (err == EACCES || err == EPERM) {
      return absl::PermissionDeniedError(absl::StrCat(
          what, ": ", std::strerror(err), "; the socket belongs to uid ", st.st_uid,
          ": run profcpu as that user or with CAP_DAC_OVERRIDE"));
    }
    if (err == ECONNREFUSED) {
      return absl::UnavailableError(
          absl::StrCat(what, ": connection refused (a stale socket: the process may have exited)"));
    }
    return base::ErrnoStatus(err, what);
  }
  return sock;
}

absl::StatusOr<Reply> SendCommand(const DiagnosticsTarget& target, uint8_t command_set,
                                  uint8_t command_id, absl::string_view payload,
                                  absl::Duration timeout) {
  auto sock = ConnectDiagnostics(target, timeout);
  if (!sock.ok()) return sock.status();
  absl::Status sent = SendAll(sock->get(), EncodeRequest(command_set, command_id, payload));
  if (!sent.ok()) return sent;
  std::string bytes;
  if (absl::Status s = ReadExactly(sock->get(), kIpcHeaderSize, &bytes); !s.ok()) return s;
  auto header = DecodeReplyHeader(bytes);
  if (!header.ok()) return header.status();
  if (header->size > kMaxReplyBytes) {
    return absl::DataLossError(absl::StrCat("diagnostics reply of ", header->size, " bytes"));
  }
  Reply reply;
  reply.header = *header;
  if (absl::Status s = ReadExactly(sock->get(), header->size - kIpcHeaderSize, &reply.payload);
      !s.ok()) {
    return s;
  }
  return reply;
}

}  // namespace profcpu::collector::dotnet
