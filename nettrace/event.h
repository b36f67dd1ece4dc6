// What a NetTrace stream holds for each event: the metadata record its
// metadata id names (provider, event id, version) and the event itself
// (header fields, payload bytes and the stack its stack id names). Filled by
// the reader (reader.h) from the stream's blocks (blocks.h, stack_cache.h).
#ifndef PROFCPU_NETTRACE_EVENT_H_
#define PROFCPU_NETTRACE_EVENT_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace profcpu::nettrace {

// One metadata record: what an event's metadata id stands for.
struct NettraceEventMetadata {
  uint32_t metadata_id = 0;
  std::string provider;     // e.g. "Microsoft-Windows-DotNETRuntime"
  uint32_t event_id = 0;
  std::string event_name;   // often empty for the runtime's own events
  uint64_t keywords = 0;
  uint32_t version = 0;
  uint32_t level = 0;
};

struct NettraceEvent {
  const NettraceEventMetadata* metadata = nullptr;  // valid while the reader lives
  uint64_t thread_id = 0;
  uint64_t capture_thread_id = 0;
  uint32_t processor = 0;
  uint32_t sequence_number = 0;
  uint32_t stack_id = 0;
  int64_t timestamp = 0;  // QPC ticks: NettraceReader::ToTime converts
  bool sorted = false;
  std::array<uint8_t, 16> activity_id{};
  std::array<uint8_t, 16> related_activity_id{};
  absl::string_view payload;  // valid until the next call to Next
  // The stack `stack_id` names, as the StackBlock lists it: return addresses,
  // the leaf first, widened to 64 bits. Valid until the next call to Next;
  // empty when the event has none (id 0, or the runtime walked no frames)
  // or when the reader does not hold it (NettraceCounts::events_stack_unknown).
  absl::Span<const uint64_t> stack;
  uint64_t offset = 0;        // of the event's header in the stream
};

}  // namespace profcpu::nettrace

#endif  // PROFCPU_NETTRACE_EVENT_H_
