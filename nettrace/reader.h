// Reads the NetTrace stream a .NET runtime's EventPipe session writes
// (format versions 4 and 5, what .NET Core 3 to .NET 10 write; docs/nettrace.md
// says where the spec lives and what is accepted), with each event's stack.
//
// The stream comes from the target process: it is hostile input. The reader
// pulls bytes from a NettraceSource one object at a time, so its memory is one
// block (at most NettraceLimits::max_block_bytes), the event metadata (at
// most max_metadata records) and the stacks since the last sequence point
// (at most max_stack_bytes); no length field is trusted before it is
// checked against what remains and a cap. Those are caps, never sizes: every
// buffer grows with the bytes that arrived (at most about twice them, plus a
// few hundred bytes), so a short stream costs little whatever it claims
// (docs/nettrace-reader.md). Every error is a DataLoss or Unimplemented
// status naming the byte offset in the stream and what was wrong.
//
// This file frames the stream (magic, serialization header, the Trace object,
// then one object per block); blocks.h reads inside a block, stack_cache.h
// keeps the stacks events name, and runtime_events.h decodes the payloads of
// the runtime's events.
#ifndef PROFCPU_NETTRACE_READER_H_
#define PROFCPU_NETTRACE_READER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nettrace/blocks.h"
#include "nettrace/event.h"
#include "nettrace/source.h"
#include "nettrace/stack_cache.h"

namespace profcpu::nettrace {

struct NettraceLimits {
  size_t max_block_bytes = 16 << 20;  // the runtime's blocks are ~100 KiB
  size_t max_metadata = 1 << 16;      // distinct event types
  // Stacks held between two sequence points (stack_cache.h): past it new
  // stacks are not kept. 0 keeps none, for a reader that needs no stacks.
  size_t max_stack_bytes = 64 << 20;
};

// The Trace object at the start of the stream.
struct NettraceTraceInfo {
  int32_t version = 0;          // of the Trace object: 4 (also in V5 files)
  absl::Time sync_time;         // UTC wall time at sync_time_qpc
  int64_t sync_time_qpc = 0;
  int64_t qpc_frequency = 0;    // ticks per second (1e9 on Linux)
  int32_t pointer_size = 0;     // 4 or 8
  int32_t process_id = 0;
  int32_t processor_count = 0;
  int32_t expected_cpu_sampling_rate = 0;
};

// What the reader went through, for logs and tests.
struct NettraceCounts {
  uint64_t event_blocks = 0;
  uint64_t metadata_blocks = 0;
  uint64_t stack_blocks = 0;
  uint64_t stacks = 0;
  uint64_t stacks_not_kept = 0;       // over max_stack_bytes, or an id out of order
  uint64_t sequence_points = 0;
  uint64_t events = 0;
  uint64_t events_stack_unknown = 0;  // naming a stack id the reader does not hold
  uint64_t metadata = 0;
};

class NettraceReader {
 public:
  explicit NettraceReader(NettraceSource* source, NettraceLimits limits = {});

  // Reads the magic, the serialization header and the Trace object.
  absl::Status ReadHeader();
  const NettraceTraceInfo& trace() const { return trace_; }

  // The next event in stream order (not time order: the runtime sorts only
  // between sequence points), with its stack. False once the end-of-stream
  // tag is read. After an error every later call returns it again.
  absl::StatusOr<bool> Next(NettraceEvent* event);

  // A QPC timestamp of this trace as wall time.
  absl::Time ToTime(int64_t qpc) const;
  // A QPC timestamp as CLOCK_MONOTONIC nanoseconds, the clock profcpu's
  // samples carry: on Linux the runtime's QPC is that clock in ns (frequency
  // 1e9); another frequency is scaled. 0 for a timestamp at or before 0.
  uint64_t ToMonotonicNs(int64_t qpc) const;

  const NettraceCounts& counts() const { return counts_; }
  uint64_t offset() const { return offset_; }

 private:
  absl::Status Fill(size_t n, std::string* out, absl::string_view what);
  // Fills `n` (a few) bytes at `out` from the read-ahead (refilled as needed).
  absl::Status FillSmall(size_t n, char* out, absl::string_view what);
  // One Read into the read-ahead: false at the end of the stream.
  absl::StatusOr<bool> ReadAhead();
  absl::Status EndsInside(absl::string_view what, size_t got, size_t n) const;
  absl::StatusOr<uint8_t> Tag(absl::string_view what);
  absl::Status ExpectTag(uint8_t tag, absl::string_view what);
  absl::Status ReadObjectType(std::string* name, int32_t* version, int32_t* min_version);
  absl::Status ReadTrace();
  // Reads the next object up to its block; false at the end of the stream.
  absl::StatusOr<bool> NextBlock();
  absl::Status ParseMetadataBlock();
  absl::Status Fail(absl::Status status);

  NettraceSource* source_;
  NettraceLimits limits_;
  NettraceTraceInfo trace_;
  NettraceCounts counts_;
  uint64_t offset_ = 0;  // bytes parsed (the read-ahead's are not, yet)
  absl::Status error_;
  bool header_read_ = false;
  bool ended_ = false;
  absl::flat_hash_map<uint32_t, std::unique_ptr<NettraceEventMetadata>> metadata_;
  // The event block being read.
  std::string block_;
  uint64_t block_offset_ = 0;  // stream offset of block_[0]
  size_t block_pos_ = 0;
  bool in_event_block_ = false;
  EventBlobDecoder blobs_;  // header compression state
  NettraceStackCache stacks_;
  // Bytes read from the source and not parsed yet: a block's framing (tags,
  // type name, size, padding) is a dozen small pieces, each of which was a
  // Read (a read(2) from a file) of its own. Grown only when a Read fills it,
  // so it stays within twice what the source gave.
  std::string ahead_;
  size_t ahead_pos_ = 0;  // the next unparsed byte of ahead_
  size_t ahead_end_ = 0;  // ahead_'s bytes past this are not read yet
};

}  // namespace profcpu::nettrace

#endif  // PROFCPU_NETTRACE_READER_H_
