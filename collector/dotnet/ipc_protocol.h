// The .NET diagnostics IPC protocol (dotnet/diagnostics,
// documentation/design-docs/ipc-protocol.md): a 20-byte header (magic
// "DOTNET_IPC_V1\0", u16 total size, u8 command set, u8 command id, u16
// reserved), then a payload; all little-endian; one command per connection.
// Encoding and decoding only: replies are treated as hostile input.
#ifndef PROFCPU_COLLECTOR_DOTNET_IPC_PROTOCOL_H_
#define PROFCPU_COLLECTOR_DOTNET_IPC_PROTOCOL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::collector::dotnet {

inline constexpr size_t kIpcHeaderSize = 20;
inline constexpr uint8_t kProcessCommandSet = 0x04;
inline constexpr uint8_t kServerCommandSet = 0xFF;
inline constexpr uint8_t kServerOk = 0x00;
inline constexpr uint8_t kServerError = 0xFF;

enum class ProcessCommand : uint8_t {
  kProcessInfo = 0x00,
  kProcessInfo2 = 0x04,  // adds entry assembly and runtime version
  kEnablePerfMap = 0x05,  // .NET 8+
  kDisablePerfMap = 0x06,
};

// Values as DOTNET_PerfMapEnabled takes them (.NET 8+).
enum class PerfMapType : uint32_t { kAll = 1, kJitDump = 2, kPerfMap = 3 };

// The runtime's answer to a command it does not know (runtimes before .NET 8
// for the perf-map commands).
inline constexpr uint32_t kHresultUnknownCommand = 0x80131385;

std::string EncodeRequest(uint8_t command_set, uint8_t command_id, absl::string_view payload);

struct ReplyHeader {
  uint8_t command_set = 0;
  uint8_t command_id = 0;
  uint16_t size = 0;  // header plus payload
};

// DataLoss unless `bytes` starts with a well-formed header.
absl::StatusOr<ReplyHeader> DecodeReplyHeader(absl::string_view bytes);

struct ProcessInfo2 {
  uint64_t pid = 0;  // as the runtime sees itself
  std::string runtime_cookie;  // 32 hex digits
  std::string command_line;
  std::string os;
  std::string architecture;
  std::string entry_assembly;
  std::string runtime_version;
};

absl::StatusOr<ProcessInfo2> DecodeProcessInfo2(absl::string_view payload);

// The HRESULT an OK or error reply carries.
absl::StatusOr<uint32_t> DecodeHresult(absl::string_view payload);

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_IPC_PROTOCOL_H_
