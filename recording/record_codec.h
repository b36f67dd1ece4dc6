// Binary encoding of one record: u32 type, u32 payload size, payload (all
// little-endian). See docs/recording-format.md for every field.
#ifndef PROFCPU_RECORDING_RECORD_CODEC_H_
#define PROFCPU_RECORDING_RECORD_CODEC_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "recording/records.h"

namespace profcpu::recording {

inline constexpr size_t kRecordPrefixSize = 8;
// No record is this large; a prefix claiming more is corrupt input.
inline constexpr uint32_t kMaxRecordPayload = 16 * 1024 * 1024;
// Deepest call chain a recording may hold (the kernel allows at most 1024 per context... and
// perf_event_max_stack is 127 by default).
inline constexpr uint32_t kMaxCallchainDepth = 4096;

enum class RecordType : uint32_t {
  kHeader = 1,
  kSample = 2,
  kMmap = 3,
  kComm = 4,
  kFork = 5,
  kExit = 6,
  kLost = 7,
  kProcessInfo = 8,
  kFinish = 9,
  kStackTrace = 10,
  kOffCpuSample = 11,
  kStackSample = 12,
  kDotnetRuntime = 13,
};

// Appends the encoded record (prefix and payload) to `out`.
void EncodeRecord(const Record& record, std::string* out);

// Decodes a payload of the given type. Unknown types give NotFound (readers
// skip those, for forward compatibility); malformed payloads give DataLoss.
absl::StatusOr<Record> DecodeRecord(uint32_t type, absl::string_view payload);
// The same into `*record`, reusing its memory when it holds a record of the
// same kind (samples); on an error `*record` is unspecified.
absl::Status DecodeRecordInto(uint32_t type, absl::string_view payload, Record* record);

}  // namespace profcpu::recording

#endif  // PROFCPU_RECORDING_RECORD_CODEC_H_
