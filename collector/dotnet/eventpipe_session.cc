#include "collector/dotnet/eventpipe_session.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/byte_io.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "collector/dotnet/ipc_protocol.h"

namespace profcpu::collector::dotnet {
namespace {

void AppendUtf16String(base::ByteWriter& w, absl::string_view ascii_or_utf8) {
  if (ascii_or_utf8.empty()) {
    w.U32(0);
    return;
  }
  // Provider names and filter data are ASCII in practice; other bytes are
  // widened one by one (the runtime only compares them).
  w.U32(static_cast<uint32_t>(ascii_or_utf8.size() + 1));
  for (char c : ascii_or_utf8) w.U16(static_cast<unsigned char>(c));
  w.U16(0);
}



// Sends one CollectTracing command and reads its reply on `sock`; the
// session id when the runtime accepted it.
absl::StatusOr<uint64_t> StartCollect(int sock, const EventPipeConfig& config,
                                 EventPipeCommand command, pid_t pid) {
  const std::string request = EncodeRequest(kEventPipeCommandSet, static_cast<uint8_t>(command),
                                            EncodeCollectTracing(config, command));
  if (absl::Status sent = SendAll(sock, request); !sent.ok()) return sent;
  std::string bytes;
  if (absl::Status s = ReadExactly(sock, kIpcHeaderSize, &bytes); !s.ok()) return s;
  auto header = DecodeReplyHeader(bytes);
  if (!header.ok()) return header.status();
  if (header->size - kIpcHeaderSize > 4096) {
    return absl::DataLossError(absl::StrCat("a CollectTracing reply of ", header->size, " bytes"));
  }
  std::string payload;
  if (absl::Status s = ReadExactly(sock, header->size - kIpcHeaderSize, &payload); !s.ok()) {
    return s;
  }
  if (header->command_set == kServerCommandSet && header->command_id == kServerError) {
    auto hresult = DecodeHresult(payload);
    if (!hresult.ok()) return hresult.status();
    if (*hresult == kHresultUnknownCommand) {
      return absl::UnimplementedError(absl::StrFormat(
          "the .NET runtime of process %d does not know EventPipe command 0x%02x", pid,
          static_cast<int>(command)));
    }
    return absl::FailedPreconditionError(absl::StrFormat(
        "the .NET runtime of process %d refused to start an EventPipe session: HRESULT 0x%08x",
        pid, *hresult));
  }
  if (header->command_set != kServerCommandSet || header->command_id != kServerOk ||
      payload.size() < 8) {
    return absl::DataLossError(absl::StrFormat(
        "unexpected reply to CollectTracing: command set 0x%02x id 0x%02x, %d payload bytes",
        header->command_set, header->command_id, payload.size()));
  }
  uint64_t session_id;
  std::memcpy(&session_id, payload.data(), 8);
  return session_id;
}

}  // namespace

std::string EncodeCollectTracing(const EventPipeConfig& config, EventPipeCommand command) {
  std::string payload;
  base::ByteWriter w(&payload);
  w.U32(config.circular_buffer_mb);
  w.U32(kEventPipeFormatNetTrace);
  if (command >= EventPipeCommand::kCollectTracing2) w.U8(config.request_rundown ? 1 : 0);
  if (command >= EventPipeCommand::kCollectTracing3) w.U8(config.request_stackwalk ? 1 : 0);
  w.U32(static_cast<uint32_t>(config.providers.size()));
  for (const EventPipeProvider& p : config.providers) {
    w.U64(p.keywords);
    w.U32(p.level);
    AppendUtf16String(w, p.name);
    AppendUtf16String(w, p.filter_data);
  }
  return payload;
}

EventPipeSession::EventPipeSession(DiagnosticsTarget target, base::UniqueFd connection,
                                   uint64_t session_id, EventPipeCommand command,
                                   uint64_t max_bytes)
    : target_(std::move(target)),
      connection_(std::move(connection)),
      session_id_(session_id),
      command_(command),
      max_bytes_(max_bytes) {}

absl::StatusOr<std::unique_ptr<EventPipeSession>> EventPipeSession::Start(
    const DiagnosticsTarget& target, const EventPipeConfig& config, absl::Duration timeout) {
  if (config.providers.empty()) {
    return absl::InvalidArgumentError("an EventPipe session needs at least one provider");
  }
  absl::Status last;
  for (EventPipeCommand command :
       {EventPipeCommand::kCollectTracing3, EventPipeCommand::kCollectTracing2}) {
    auto sock = ConnectDiagnostics(target, timeout);
    if (!sock.ok()) return sock.status();
    auto session_id = StartCollect(sock->get(), config, command, target.pid);
    if (absl::IsUnimplemented(session_id.status())) {
      last = session_id.status();
      continue;  // an older runtime: one command back
    }
    if (!session_id.ok()) return session_id.status();
    return std::unique_ptr<EventPipeSession>(new EventPipeSession(
        target, std::move(*sock), *session_id, command, config.max_bytes));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      last.message(), " nor 0x03 (CollectTracing2): EventPipe needs .NET 5 or later"));
}

absl::StatusOr<bool> EventPipeSession::CopyOnce(int out_fd, absl::Duration wait) {
  pollfd p = {connection_.get(), POLLIN, 0};
  int ms = static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(wait)));
  int n = ::poll(&p, 1, ms);
  if (n < 0 && errno != EINTR) return base::ErrnoStatus(errno, "poll the EventPipe connection");
  if (n <= 0) return true;
  char buffer[64 * 1024];
  ssize_t r = ::read(connection_.get(), buffer, sizeof(buffer));
  if (r < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return true;
    // A reset: the process died mid-session.
    if (errno == ECONNRESET) return false;
    return base::ErrnoStatus(errno, "read the EventPipe stream");
  }
  if (r == 0) return false;
  bytes_read_ += static_cast<uint64_t>(r);
  absl::string_view data(buffer, static_cast<size_t>(r));
  std::string filtered;
  if (filter_ != nullptr) {
    if (filter_error_.ok()) filter_error_ = filter_->Feed(data, &filtered);
    // After damage nothing more is written: the file stays well-formed.
    data = filter_error_.ok() ? absl::string_view(filtered) : absl::string_view();
  }
  if (filter_ != nullptr) {
    // The filter hands over whole objects. Rather than cut one at the cap,
    // the stream ends at the last that fits, closed by the end-of-stream tag
    // (one byte kept back for it), so every reader reads the file whole.
    if (truncated_) return true;
    const uint64_t cap = max_bytes_ > 0 ? max_bytes_ - 1 : 0;
    if (bytes_written_ + data.size() > cap) {
      truncated_ = true;
      absl::Status s = base::WriteAll(out_fd, absl::string_view("\x01", 1), "the nettrace file");
      if (!s.ok()) return s;
      ++bytes_written_;
      return true;
    }
  }
  uint64_t room = max_bytes_ > bytes_written_ ? max_bytes_ - bytes_written_ : 0;
  size_t keep = static_cast<size_t>(std::min<uint64_t>(room, data.size()));
  if (keep < data.size()) truncated_ = true;
  if (keep > 0) {
    absl::Status s = base::WriteAll(out_fd, data.substr(0, keep), "the nettrace file");
    if (!s.ok()) return s;
    bytes_written_ += keep;
  }
  return true;
}

absl::StatusOr<bool> EventPipeSession::Pump(int out_fd, absl::Time until) {
  while (!ended_) {
    absl::Duration left = until - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    auto more = CopyOnce(out_fd, std::min(left, absl::Milliseconds(200)));
    if (!more.ok()) return more.status();
    if (!*more) ended_ = true;
  }
  return true;
}

absl::Status EventPipeSession::Stop(int out_fd, absl::Duration timeout) {
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  absl::Status stop_status;
  std::thread stopper;
  if (!ended_) {
    std::string payload(8, '\0');
    std::memcpy(payload.data(), &session_id_, 8);
    stopper = std::thread([this, payload, timeout, &stop_status] {
      auto reply = SendCommand(target_, kEventPipeCommandSet,
                               static_cast<uint8_t>(EventPipeCommand::kStopTracing), payload,
                               timeout);
      if (!reply.ok()) {
        stop_status = reply.status();
      } else if (reply->header.command_set == kServerCommandSet &&
                 reply->header.command_id == kServerError) {
        auto hresult = DecodeHresult(reply->payload);
        stop_status = absl::FailedPreconditionError(absl::StrFormat(
            "the .NET runtime of process %d refused to stop EventPipe session %d: HRESULT 0x%08x",
            target_.pid, session_id_, hresult.ok() ? *hresult : 0));
      }
    });
  }
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status pumped;
  while (!ended_ && absl::Now() < deadline) {
    auto more = CopyOnce(out_fd, std::min(deadline - absl::Now(), absl::Milliseconds(200)));
    if (!more.ok()) {
      pumped = more.status();
      break;
    }
    if (!*more) ended_ = true;
  }
  if (stopper.joinable()) stopper.join();
  connection_ = base::UniqueFd();
  if (!pumped.ok()) return pumped;
  // A stream that ended is complete, even if StopTracing failed: the process
  // may have exited (ending its sessions) just before it was sent.
  if (!stop_status.ok() && !ended_) return stop_status;
  if (!ended_) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the .NET runtime of process ", target_.pid, " did not end EventPipe session ",
        session_id_, "'s stream within ", absl::FormatDuration(timeout), " of StopTracing"));
  }
  return absl::OkStatus();
}

}  // namespace profcpu::collector::dotnet
