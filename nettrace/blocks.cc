#include "nettrace/blocks.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "nettrace/cursor.h"

namespace profcpu::nettrace {
namespace {

// An uncompressed event header after its size field.
constexpr size_t kUncompressedHeaderBytes = 4 + 4 + 8 + 8 + 4 + 4 + 8 + 16 + 16 + 4;
constexpr size_t kBlockHeaderMinBytes = 20;

// Header compression flags.
constexpr uint8_t kFlagMetadataId = 1 << 0;
constexpr uint8_t kFlagCaptureThreadAndSequence = 1 << 1;
constexpr uint8_t kFlagThreadId = 1 << 2;
constexpr uint8_t kFlagStackId = 1 << 3;
constexpr uint8_t kFlagActivityId = 1 << 4;
constexpr uint8_t kFlagRelatedActivityId = 1 << 5;
constexpr uint8_t kFlagSorted = 1 << 6;
constexpr uint8_t kFlagDataLength = 1 << 7;

}  // namespace

absl::StatusOr<EventBlockHeader> ParseEventBlockHeader(absl::string_view block,
                                                       uint64_t block_offset,
                                                       absl::string_view name) {
  NettraceCursor c(block, block_offset);
  uint16_t header_size, flags;
  if (absl::Status s = c.Fixed(&header_size, "the block header's size"); !s.ok()) return s;
  if (absl::Status s = c.Fixed(&flags, "the block header's flags"); !s.ok()) return s;
  if (header_size < kBlockHeaderMinBytes || header_size > block.size()) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", block_offset, ": a ", name,
                                            " header of ", header_size, " bytes in a block of ",
                                            block.size()));
  }
  return EventBlockHeader{header_size, (flags & 1) != 0};
}

void EventBlobDecoder::StartBlock(bool compressed) {
  compressed_ = compressed;
  previous_ = NettraceEvent();
  previous_payload_size_ = 0;
  previous_metadata_id_ = 0;
}

absl::Status EventBlobDecoder::Read(absl::string_view block, uint64_t block_offset, size_t* pos,
                                    NettraceEvent* event, uint32_t* metadata_id) {
  NettraceCursor c(block, block_offset, *pos);
  NettraceEvent& prev = previous_;
  *event = prev;
  event->offset = c.offset();
  if (!compressed_) {
    int32_t size;
    if (absl::Status s = c.Fixed(&size, "an event's size"); !s.ok()) return s;
    const size_t start = c.pos();
    if (size < 0 || static_cast<size_t>(size) < kUncompressedHeaderBytes ||
        static_cast<size_t>(size) > c.remaining()) {
      return absl::DataLossError(absl::StrCat("nettrace offset ", event->offset,
                                              ": an event of ", size, " bytes with ",
                                              c.remaining(), " left in its block"));
    }
    uint32_t id = 0, seq = 0, proc = 0, stack = 0, payload_size = 0;
    uint64_t thread = 0, capture = 0;
    int64_t ts = 0;
    absl::string_view guids;
    // Inside the size just checked: these reads cannot fail (zeroed anyway,
    // so no compiler has to take that on trust).
    (void)c.Fixed(&id, "");
    (void)c.Fixed(&seq, "");
    (void)c.Fixed(&thread, "");
    (void)c.Fixed(&capture, "");
    (void)c.Fixed(&proc, "");
    (void)c.Fixed(&stack, "");
    (void)c.Fixed(&ts, "");
    (void)c.Bytes(32, &guids, "");
    (void)c.Fixed(&payload_size, "");
    if (payload_size > static_cast<size_t>(size) - kUncompressedHeaderBytes) {
      return absl::DataLossError(absl::StrCat("nettrace offset ", c.offset() - 4,
                                              ": a payload of ", payload_size,
                                              " bytes in an event of ", size));
    }
    *metadata_id = id & 0x7fffffff;
    event->sorted = (id & 0x80000000u) != 0;
    event->sequence_number = seq;
    event->thread_id = thread;
    event->capture_thread_id = capture;
    event->processor = proc;
    event->stack_id = stack;
    event->timestamp = ts;
    std::memcpy(event->activity_id.data(), guids.data(), 16);
    std::memcpy(event->related_activity_id.data(), guids.data() + 16, 16);
    (void)c.Bytes(payload_size, &event->payload, "");
    size_t end = start + static_cast<size_t>(size);
    // Zero padding to a 4-byte stream offset.
    uint64_t stream_end = block_offset + end;
    end += (4 - stream_end % 4) % 4;
    *pos = std::min(end, block.size());
    return absl::OkStatus();
  }
  uint8_t flags;
  if (absl::Status s = c.Fixed(&flags, "an event header's flags"); !s.ok()) return s;
  *metadata_id = previous_metadata_id_;
  if (flags & kFlagMetadataId) {
    if (absl::Status s = c.VarU32(metadata_id, "an event's metadata id"); !s.ok()) return s;
  }
  if (flags & kFlagCaptureThreadAndSequence) {
    uint32_t delta;
    if (absl::Status s = c.VarU32(&delta, "an event's sequence number"); !s.ok()) return s;
    event->sequence_number += delta;
    if (absl::Status s = c.VarU64(&event->capture_thread_id, "an event's capture thread");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = c.VarU32(&event->processor, "an event's processor"); !s.ok()) return s;
  }
  if (*metadata_id != 0) ++event->sequence_number;
  if (flags & kFlagThreadId) {
    if (absl::Status s = c.VarU64(&event->thread_id, "an event's thread id"); !s.ok()) return s;
  }
  if (flags & kFlagStackId) {
    if (absl::Status s = c.VarU32(&event->stack_id, "an event's stack id"); !s.ok()) return s;
  }
  uint64_t delta;
  if (absl::Status s = c.VarU64(&delta, "an event's timestamp"); !s.ok()) return s;
  event->timestamp = static_cast<int64_t>(static_cast<uint64_t>(prev.timestamp) + delta);
  absl::string_view guid;
  if (flags & kFlagActivityId) {
    if (absl::Status s = c.Bytes(16, &guid, "an event's activity id"); !s.ok()) return s;
    std::memcpy(event->activity_id.data(), guid.data(), 16);
  }
  if (flags & kFlagRelatedActivityId) {
    if (absl::Status s = c.Bytes(16, &guid, "an event's related activity id"); !s.ok()) return s;
    std::memcpy(event->related_activity_id.data(), guid.data(), 16);
  }
  event->sorted = (flags & kFlagSorted) != 0;
  uint32_t payload_size = previous_payload_size_;
  if (flags & kFlagDataLength) {
    if (absl::Status s = c.VarU32(&payload_size, "an event's payload size"); !s.ok()) return s;
  }
  if (absl::Status s = c.Bytes(payload_size, &event->payload, "an event's payload"); !s.ok()) {
    return s;
  }
  previous_payload_size_ = payload_size;
  previous_metadata_id_ = *metadata_id;
  prev = *event;
  *pos = c.pos();
  return absl::OkStatus();
}

namespace {

void PutVarint(std::string* out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    out->push_back(static_cast<char>(byte | (v ? 0x80 : 0)));
  } while (v);
}

}  // namespace

void EventBlobEncoder::StartBlock() {
  previous_ = NettraceEvent();
  previous_payload_size_ = 0;
  previous_metadata_id_ = 0;
}

void EventBlobEncoder::Write(const NettraceEvent& e, uint32_t metadata_id, std::string* out) {
  const NettraceEvent& prev = previous_;
  // The decoder adds one to the sequence number of every event with a
  // metadata id, then the delta when the flag says one follows.
  const uint32_t implied = prev.sequence_number + (metadata_id != 0 ? 1 : 0);
  const uint32_t payload_size = static_cast<uint32_t>(e.payload.size());
  uint8_t flags = 0;
  if (metadata_id != previous_metadata_id_) flags |= kFlagMetadataId;
  if (e.sequence_number != implied || e.capture_thread_id != prev.capture_thread_id ||
      e.processor != prev.processor) {
    flags |= kFlagCaptureThreadAndSequence;
  }
  if (e.thread_id != prev.thread_id) flags |= kFlagThreadId;
  if (e.stack_id != prev.stack_id) flags |= kFlagStackId;
  if (e.activity_id != prev.activity_id) flags |= kFlagActivityId;
  if (e.related_activity_id != prev.related_activity_id) flags |= kFlagRelatedActivityId;
  if (e.sorted) flags |= kFlagSorted;
  if (payload_size != previous_payload_size_) flags |= kFlagDataLength;
  out->push_back(static_cast<char>(flags));
  if (flags & kFlagMetadataId) PutVarint(out, metadata_id);
  if (flags & kFlagCaptureThreadAndSequence) {
    PutVarint(out, static_cast<uint32_t>(e.sequence_number - implied));
    PutVarint(out, e.capture_thread_id);
    PutVarint(out, e.processor);
  }
  if (flags & kFlagThreadId) PutVarint(out, e.thread_id);
  if (flags & kFlagStackId) PutVarint(out, e.stack_id);
  PutVarint(out, static_cast<uint64_t>(e.timestamp) - static_cast<uint64_t>(prev.timestamp));
  if (flags & kFlagActivityId) {
    out->append(reinterpret_cast<const char*>(e.activity_id.data()), 16);
  }
  if (flags & kFlagRelatedActivityId) {
    out->append(reinterpret_cast<const char*>(e.related_activity_id.data()), 16);
  }
  if (flags & kFlagDataLength) PutVarint(out, payload_size);
  out->append(e.payload.data(), e.payload.size());
  previous_ = e;
  previous_payload_size_ = payload_size;
  previous_metadata_id_ = metadata_id;
}

absl::Status ParseMetadataRecord(absl::string_view payload, uint64_t payload_offset,
                                 NettraceEventMetadata* meta) {
  NettraceCursor c(payload, payload_offset);
  if (absl::Status s = c.Fixed(&meta->metadata_id, "a metadata record's id"); !s.ok()) return s;
  if (absl::Status s = c.Utf16z(&meta->provider, "a metadata record's provider name"); !s.ok()) {
    return s;
  }
  if (absl::Status s = c.Fixed(&meta->event_id, "a metadata record's event id"); !s.ok()) {
    return s;
  }
  if (absl::Status s = c.Utf16z(&meta->event_name, "a metadata record's event name"); !s.ok()) {
    return s;
  }
  if (absl::Status s = c.Fixed(&meta->keywords, "a metadata record's keywords"); !s.ok()) {
    return s;
  }
  if (absl::Status s = c.Fixed(&meta->version, "a metadata record's version"); !s.ok()) return s;
  if (absl::Status s = c.Fixed(&meta->level, "a metadata record's level"); !s.ok()) return s;
  // The field descriptions (and V5's tags) follow; profcpu decodes the
  // payloads it needs by their documented layouts instead.
  if (meta->metadata_id == 0) {
    return absl::DataLossError(
        absl::StrCat("nettrace offset ", payload_offset, ": a metadata record with id 0"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> ParseStackBlock(
    absl::string_view block, uint64_t block_offset, int32_t pointer_size,
    absl::FunctionRef<void(uint64_t id, absl::string_view addresses)> stack) {
  NettraceCursor c(block, block_offset);
  uint32_t first_id, count;
  if (absl::Status s = c.Fixed(&first_id, "a StackBlock's first id"); !s.ok()) return s;
  if (absl::Status s = c.Fixed(&count, "a StackBlock's stack count"); !s.ok()) return s;
  if (count > c.remaining() / 4) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", c.offset() - 4, ": ", count,
                                            " stacks in a StackBlock with ", c.remaining(),
                                            " bytes left"));
  }
  // Checked whole first, then handed out: a damaged block keeps none.
  const size_t stacks_at = c.pos();
  for (int pass = 0; pass < 2; ++pass) {
    NettraceCursor walk(block, block_offset, stacks_at);
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t size;
      if (absl::Status s = walk.Fixed(&size, "a stack's size"); !s.ok()) return s;
      if (pointer_size <= 0 || size % static_cast<uint32_t>(pointer_size) != 0) {
        return absl::DataLossError(absl::StrCat("nettrace offset ", walk.offset() - 4,
                                                ": a stack of ", size,
                                                " bytes, not a whole number of ", pointer_size,
                                                "-byte addresses"));
      }
      absl::string_view addresses;
      if (absl::Status s = walk.Bytes(size, &addresses, "a stack"); !s.ok()) return s;
      if (pass == 1) stack(static_cast<uint64_t>(first_id) + i, addresses);
    }
  }
  return count;
}

absl::Status ParseSequencePointBlock(absl::string_view block, uint64_t block_offset) {
  NettraceCursor c(block, block_offset);
  int64_t timestamp;
  uint32_t threads;
  if (absl::Status s = c.Fixed(&timestamp, "a sequence point's timestamp"); !s.ok()) return s;
  if (absl::Status s = c.Fixed(&threads, "a sequence point's thread count"); !s.ok()) return s;
  return c.Need(static_cast<uint64_t>(threads) * 12, "a sequence point's threads");
}

}  // namespace profcpu::nettrace
