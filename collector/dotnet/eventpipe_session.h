// An EventPipe session on a .NET process, over its diagnostics IPC socket
// (dotnet/diagnostics documentation/design-docs/ipc-protocol.md, command set
// 0x02): CollectTracing3 (or CollectTracing2 on runtimes before .NET 8) starts
// a session whose connection then carries the NetTrace stream
// (nettrace/reader.h); StopTracing, on a second connection, ends it and the
// runtime flushes, writes the end-of-stream tag and closes the first.
#ifndef PROFCPU_COLLECTOR_DOTNET_EVENTPIPE_SESSION_H_
#define PROFCPU_COLLECTOR_DOTNET_EVENTPIPE_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "collector/dotnet/diagnostics_client.h"
#include "nettrace/stream_filter.h"

namespace profcpu::collector::dotnet {

inline constexpr uint8_t kEventPipeCommandSet = 0x02;

enum class EventPipeCommand : uint8_t {
  kStopTracing = 0x01,
  kCollectTracing = 0x02,   // .NET Core 3
  kCollectTracing2 = 0x03,  // .NET 5+: adds requestRundown
  kCollectTracing3 = 0x04,  // .NET 8+: adds requestStackwalk
};

// The runtime's format number for NetTrace (0 is the old NetPerf).
inline constexpr uint32_t kEventPipeFormatNetTrace = 1;

struct EventPipeProvider {
  std::string name;          // e.g. "Microsoft-Windows-DotNETRuntime"
  uint64_t keywords = 0;
  uint32_t level = 4;        // 4 = informational, 5 = verbose
  std::string filter_data;   // "key=value;..." or empty
};

struct EventPipeConfig {
  std::vector<EventPipeProvider> providers;
  uint32_t circular_buffer_mb = 64;
  // Rundown at the end of the session (method and module names of code
  // already jitted): off by default, it can take seconds in a big app.
  bool request_rundown = false;
  // A managed stack per event (only CollectTracing3 can turn it off).
  bool request_stackwalk = false;
  // Bytes written to the output at most; the rest is read and dropped.
  uint64_t max_bytes = uint64_t{1} << 30;
};

// The command's payload, for `command` CollectTracing2 or CollectTracing3.
std::string EncodeCollectTracing(const EventPipeConfig& config, EventPipeCommand command);

class EventPipeSession {
 public:
  // Starts a session: CollectTracing3, then CollectTracing2 if the runtime
  // does not know it. FailedPrecondition naming the HRESULT when the runtime
  // refuses; the errors of FindDiagnosticsTarget/SendCommand otherwise.
  static absl::StatusOr<std::unique_ptr<EventPipeSession>> Start(
      const DiagnosticsTarget& target, const EventPipeConfig& config,
      absl::Duration timeout = absl::Seconds(5));

  uint64_t session_id() const { return session_id_; }
  EventPipeCommand command() const { return command_; }

  // Copies what the runtime sends into `out_fd` until `until`, or until the
  // runtime closes the stream (the process exited): then true.
  absl::StatusOr<bool> Pump(int out_fd, absl::Time until);

  // Sends StopTracing (from another thread, while this one keeps reading so
  // the runtime's final flush cannot block on a full socket) and copies the
  // rest of the stream until the runtime closes it, within `timeout`.
  absl::Status Stop(int out_fd, absl::Duration timeout = absl::Seconds(15));

  // Rewrites the stream before it is written (without the events it
  // declines); nullptr: the stream is copied as read. Set before Pump.
  void set_filter(nettrace::NettraceStreamFilter* filter) { filter_ = filter; }
  // Why the filter stopped (the stream was damaged): the file holds the
  // well-formed part before, the rest was read and dropped.
  const absl::Status& filter_error() const { return filter_error_; }

  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  // The cap cut the file (max_bytes).
  bool truncated() const { return truncated_; }

 private:
  EventPipeSession(DiagnosticsTarget target, base::UniqueFd connection, uint64_t session_id,
                   EventPipeCommand command, uint64_t max_bytes);
  // One read (waiting up to `wait`): false at the end of the stream.
  absl::StatusOr<bool> CopyOnce(int out_fd, absl::Duration wait);

  DiagnosticsTarget target_;
  base::UniqueFd connection_;
  uint64_t session_id_;
  EventPipeCommand command_;
  uint64_t max_bytes_;
  uint64_t bytes_read_ = 0;
  uint64_t bytes_written_ = 0;
  bool truncated_ = false;
  nettrace::NettraceStreamFilter* filter_ = nullptr;
  absl::Status filter_error_;
  bool ended_ = false;
  bool stopped_ = false;
};

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_EVENTPIPE_SESSION_H_
