// The FastSerialization framing a NetTrace stream is written in
// (microsoft/perfview src/TraceEvent/EventPipe/EventPipeFormat.md): the tags
// around objects and the bounds profcpu holds them to. Shared by the reader
// and the stream filter.
#ifndef PROFCPU_NETTRACE_FAST_SERIALIZATION_H_
#define PROFCPU_NETTRACE_FAST_SERIALIZATION_H_

#include <cstddef>
#include <cstdint>

namespace profcpu::nettrace {

inline constexpr uint8_t kNullReference = 1;
inline constexpr uint8_t kBeginPrivateObject = 5;
inline constexpr uint8_t kEndObject = 6;
// Type names are "Trace", "EventBlock", ...: a longer one is damage.
inline constexpr size_t kMaxTypeNameBytes = 64;
// The Trace object's fields: SYSTEMTIME (8 u16), 2 i64, 4 i32.
inline constexpr size_t kTraceFieldBytes = 16 + 16 + 16;

}  // namespace profcpu::nettrace

#endif  // PROFCPU_NETTRACE_FAST_SERIALIZATION_H_
