#include "collector/dotnet/nettrace_reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "collector/dotnet/ipc_protocol.h"

namespace profcpu::collector::dotnet {
namespace {

// FastSerialization tags.
constexpr uint8_t kNullReference = 1;
constexpr uint8_t kBeginPrivateObject = 5;
constexpr uint8_t kEndObject = 6;

constexpr absl::string_view kNettraceMagic = "Nettrace";
constexpr absl::string_view kSerializationHeader = "!FastSerialization.1";
constexpr size_t kMaxTypeNameBytes = 64;
// The Trace object's fields: SYSTEMTIME (8 u16), 2 i64, 4 i32.
constexpr size_t kTraceFieldBytes = 16 + 16 + 16;
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

std::string Printable(absl::string_view bytes) {
  return absl::CHexEscape(bytes.substr(0, 32));
}

// Bounds-checked little-endian reads inside one block; `base` is the block's
// offset in the stream, for error messages.
class NettraceCursor {
 public:
  NettraceCursor(absl::string_view data, uint64_t base, size_t pos = 0)
      : data_(data), base_(base), pos_(pos) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  uint64_t offset() const { return base_ + pos_; }

  absl::Status Need(size_t n, absl::string_view what) const {
    if (n > remaining()) {
      return absl::DataLossError(absl::StrCat("nettrace offset ", offset(), ": ", what, " needs ",
                                              n, " bytes, the block has ", remaining(), " left"));
    }
    return absl::OkStatus();
  }
  template <typename T>
  absl::Status Fixed(T* out, absl::string_view what) {
    if (absl::Status s = Need(sizeof(T), what); !s.ok()) return s;
    std::memcpy(out, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return absl::OkStatus();
  }
  absl::Status Bytes(size_t n, absl::string_view* out, absl::string_view what) {
    if (absl::Status s = Need(n, what); !s.ok()) return s;
    *out = data_.substr(pos_, n);
    pos_ += n;
    return absl::OkStatus();
  }
  absl::Status Skip(size_t n, absl::string_view what) {
    absl::string_view ignored;
    return Bytes(n, &ignored, what);
  }
  // LEB128, at most `max_bytes` bytes.
  absl::Status VarUint(uint64_t* out, size_t max_bytes, absl::string_view what) {
    uint64_t value = 0;
    const uint64_t start = offset();
    for (size_t i = 0; i < max_bytes; ++i) {
      uint8_t byte;
      if (absl::Status s = Fixed(&byte, what); !s.ok()) return s;
      value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) {
        *out = value;
        return absl::OkStatus();
      }
    }
    return absl::DataLossError(absl::StrCat("nettrace offset ", start, ": ", what,
                                            " is a variable-length integer longer than ",
                                            max_bytes, " bytes"));
  }
  absl::Status VarU32(uint32_t* out, absl::string_view what) {
    uint64_t v;
    if (absl::Status s = VarUint(&v, 5, what); !s.ok()) return s;
    *out = static_cast<uint32_t>(v);
    return absl::OkStatus();
  }
  absl::Status VarU64(uint64_t* out, absl::string_view what) { return VarUint(out, 10, what); }
  // A NUL-terminated UTF-16LE string, as UTF-8.
  absl::Status Utf16z(std::string* out, absl::string_view what) {
    for (size_t end = pos_; end + 1 < data_.size(); end += 2) {
      if (data_[end] == 0 && data_[end + 1] == 0) {
        *out = Utf16LeToUtf8(data_.substr(pos_, end - pos_));
        pos_ = end + 2;
        return absl::OkStatus();
      }
    }
    return absl::DataLossError(absl::StrCat("nettrace offset ", offset(), ": ", what,
                                            " has no NUL terminator before the end of its data"));
  }

 private:
  absl::string_view data_;
  uint64_t base_;
  size_t pos_;
};

}  // namespace

absl::StatusOr<size_t> NettraceStringSource::Read(char* buffer, size_t n) {
  n = std::min(n, bytes_.size());
  std::memcpy(buffer, bytes_.data(), n);
  bytes_.remove_prefix(n);
  return n;
}

absl::StatusOr<size_t> NettraceFdSource::Read(char* buffer, size_t n) {
  while (true) {
    ssize_t r = ::read(fd_, buffer, n);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno != EINTR) return base::ErrnoStatus(errno, "read the nettrace stream");
  }
}

NettraceReader::NettraceReader(NettraceSource* source, NettraceLimits limits)
    : source_(source), limits_(limits) {}

absl::Status NettraceReader::Fail(absl::Status status) {
  if (error_.ok()) error_ = status;
  return error_;
}

absl::Status NettraceReader::Fill(size_t n, std::string* out, absl::string_view what) {
  // Grown as bytes arrive, not to `n` at once: a size field that promises
  // more than the stream holds costs no more memory than the bytes sent.
  constexpr size_t kChunk = 64 << 10;
  out->clear();
  size_t got = 0;
  while (got < n) {
    if (out->size() == got) out->resize(got + std::min(n - got, std::max(kChunk, got)));
    auto r = source_->Read(out->data() + got, out->size() - got);
    if (!r.ok()) return r.status();
    if (*r == 0) {
      return absl::DataLossError(absl::StrCat("nettrace offset ", offset_, ": the stream ends inside ",
                                              what, " (", got, " of its ", n, " bytes)"));
    }
    const size_t take = std::min(*r, out->size() - got);
    got += take;
    offset_ += take;
  }
  return absl::OkStatus();
}

absl::StatusOr<uint8_t> NettraceReader::Tag(absl::string_view what) {
  std::string byte;
  if (absl::Status s = Fill(1, &byte, what); !s.ok()) return s;
  return static_cast<uint8_t>(byte[0]);
}

absl::Status NettraceReader::ExpectTag(uint8_t tag, absl::string_view what) {
  const uint64_t at = offset_;
  auto got = Tag(what);
  if (!got.ok()) return got.status();
  if (*got != tag) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", at, ": expected ", what, " (tag ",
                                            tag, "), found byte ", *got));
  }
  return absl::OkStatus();
}

// After a BeginPrivateObject tag: the object's type, itself an object whose
// type is the null reference.
absl::Status NettraceReader::ReadObjectType(std::string* name, int32_t* version,
                                            int32_t* min_version) {
  if (absl::Status s = ExpectTag(kBeginPrivateObject, "the start of an object's type"); !s.ok()) {
    return s;
  }
  if (absl::Status s = ExpectTag(kNullReference, "the null type of a type"); !s.ok()) return s;
  std::string fixed;
  if (absl::Status s = Fill(12, &fixed, "an object type"); !s.ok()) return s;
  uint32_t name_size;
  std::memcpy(version, fixed.data(), 4);
  std::memcpy(min_version, fixed.data() + 4, 4);
  std::memcpy(&name_size, fixed.data() + 8, 4);
  if (name_size > kMaxTypeNameBytes) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", offset_ - 4, ": a type name of ",
                                            name_size, " bytes (at most ", kMaxTypeNameBytes,
                                            ")"));
  }
  if (absl::Status s = Fill(name_size, name, "a type name"); !s.ok()) return s;
  return ExpectTag(kEndObject, "the end of an object's type");
}

absl::Status NettraceReader::ReadHeader() {
  if (header_read_) return error_;
  header_read_ = true;
  std::string bytes;
  if (absl::Status s = Fill(kNettraceMagic.size(), &bytes, "the \"Nettrace\" magic"); !s.ok()) {
    return Fail(s);
  }
  if (bytes != kNettraceMagic) {
    if (bytes.substr(0, 4) == std::string("\x14\0\0\0", 4)) {
      return Fail(absl::UnimplementedError(
          "nettrace offset 0: a NetPerf stream (format version 3, .NET Core 2.1), not NetTrace"));
    }
    return Fail(absl::DataLossError(absl::StrCat(
        "nettrace offset 0: not a NetTrace stream (no \"Nettrace\" magic): starts with \"",
        Printable(bytes), "\"")));
  }
  if (absl::Status s = Fill(4 + kSerializationHeader.size(), &bytes, "the serialization header");
      !s.ok()) {
    return Fail(s);
  }
  if (bytes != absl::StrCat(std::string("\x14\0\0\0", 4), kSerializationHeader)) {
    return Fail(absl::DataLossError(absl::StrCat(
        "nettrace offset 8: expected the length-prefixed \"!FastSerialization.1\", found \"",
        Printable(bytes), "\"")));
  }
  return Fail(ReadTrace());
}

absl::Status NettraceReader::ReadTrace() {
  const uint64_t at = offset_;
  if (absl::Status s = ExpectTag(kBeginPrivateObject, "the Trace object"); !s.ok()) return s;
  std::string name;
  int32_t version, min_version;
  if (absl::Status s = ReadObjectType(&name, &version, &min_version); !s.ok()) return s;
  if (name != "Trace") {
    return absl::DataLossError(absl::StrCat("nettrace offset ", at,
                                            ": the first object is \"", absl::CHexEscape(name),
                                            "\", not the Trace object"));
  }
  if (min_version > 5 || version < 4) {
    return absl::UnimplementedError(absl::StrCat(
        "nettrace offset ", at, ": Trace object version ", version, " (readable from version ",
        min_version, "); this reader reads NetTrace versions 4 and 5"));
  }
  std::string fields;
  const uint64_t fields_at = offset_;
  if (absl::Status s = Fill(kTraceFieldBytes, &fields, "the Trace object"); !s.ok()) return s;
  uint16_t st[8];
  std::memcpy(st, fields.data(), sizeof(st));
  trace_.version = version;
  trace_.sync_time = absl::FromCivil(absl::CivilSecond(st[0], st[1], st[3], st[4], st[5], st[6]),
                                     absl::UTCTimeZone()) +
                     absl::Milliseconds(st[7]);
  std::memcpy(&trace_.sync_time_qpc, fields.data() + 16, 8);
  std::memcpy(&trace_.qpc_frequency, fields.data() + 24, 8);
  std::memcpy(&trace_.pointer_size, fields.data() + 32, 4);
  std::memcpy(&trace_.process_id, fields.data() + 36, 4);
  std::memcpy(&trace_.processor_count, fields.data() + 40, 4);
  std::memcpy(&trace_.expected_cpu_sampling_rate, fields.data() + 44, 4);
  if (trace_.qpc_frequency <= 0) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", fields_at + 24,
                                            ": QPC frequency ", trace_.qpc_frequency));
  }
  if (trace_.pointer_size != 4 && trace_.pointer_size != 8) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", fields_at + 32, ": pointer size ",
                                            trace_.pointer_size));
  }
  return ExpectTag(kEndObject, "the end of the Trace object");
}

uint64_t NettraceReader::ToMonotonicNs(int64_t qpc) const {
  if (qpc <= 0) return 0;
  const int64_t frequency = trace_.qpc_frequency;
  if (frequency == 1'000'000'000 || frequency <= 0) return static_cast<uint64_t>(qpc);
  // A hostile frequency could make the product overflow 64 bits.
  const unsigned __int128 ns = static_cast<unsigned __int128>(qpc) * 1'000'000'000u /
                               static_cast<uint64_t>(frequency);
  return ns > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(ns);
}

absl::Time NettraceReader::ToTime(int64_t qpc) const {
  if (trace_.qpc_frequency <= 0) return trace_.sync_time;
  __int128 ns = (static_cast<__int128>(qpc) - trace_.sync_time_qpc) * 1000000000 /
                trace_.qpc_frequency;
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  if (ns > kMax) ns = kMax;
  if (ns < -kMax) ns = -kMax;
  return trace_.sync_time + absl::Nanoseconds(static_cast<int64_t>(ns));
}

absl::StatusOr<bool> NettraceReader::NextBlock() {
  const uint64_t at = offset_;
  auto tag = Tag("the next object or the end-of-stream tag");
  if (!tag.ok()) return tag.status();
  if (*tag == kNullReference) return false;
  if (*tag != kBeginPrivateObject) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", at,
                                            ": expected an object (tag 5) or the end of the "
                                            "stream (tag 1), found byte ",
                                            *tag));
  }
  std::string name;
  int32_t version, min_version;
  if (absl::Status s = ReadObjectType(&name, &version, &min_version); !s.ok()) return s;
  const bool event_block = name == "EventBlock";
  const bool metadata_block = name == "MetadataBlock";
  const bool stack_block = name == "StackBlock";
  const bool sp_block = name == "SPBlock";
  if (!event_block && !metadata_block && !stack_block && !sp_block) {
    return absl::UnimplementedError(absl::StrCat("nettrace offset ", at,
                                                 ": an object of unknown type \"",
                                                 absl::CHexEscape(name), "\""));
  }
  if (min_version > 2) {
    return absl::UnimplementedError(absl::StrCat("nettrace offset ", at, ": ", name, " version ",
                                                 version, " needs a reader of version ",
                                                 min_version, "; this one reads version 2"));
  }
  std::string size_bytes;
  if (absl::Status s = Fill(4, &size_bytes, "a block's size"); !s.ok()) return s;
  uint32_t size;
  std::memcpy(&size, size_bytes.data(), 4);
  if (size > limits_.max_block_bytes) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", offset_ - 4, ": a ", name, " of ",
                                            size, " bytes (at most ", limits_.max_block_bytes,
                                            ")"));
  }
  std::string padding;
  if (absl::Status s = Fill((4 - offset_ % 4) % 4, &padding, "a block's alignment padding");
      !s.ok()) {
    return s;
  }
  block_offset_ = offset_;
  if (absl::Status s = Fill(size, &block_, name); !s.ok()) return s;
  if (absl::Status s = ExpectTag(kEndObject, "the end of a block object"); !s.ok()) return s;

  if (stack_block || sp_block) {
    absl::Status s = stack_block ? ParseStackBlock() : ParseSequencePointBlock();
    if (!s.ok()) return s;
    return true;
  }
  // Event and metadata blocks: the header, then event blobs.
  NettraceCursor c(block_, block_offset_);
  uint16_t header_size, flags;
  if (absl::Status s = c.Fixed(&header_size, "the block header's size"); !s.ok()) return s;
  if (absl::Status s = c.Fixed(&flags, "the block header's flags"); !s.ok()) return s;
  if (header_size < kBlockHeaderMinBytes || header_size > block_.size()) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", block_offset_, ": a ", name,
                                            " header of ", header_size, " bytes in a block of ",
                                            block_.size()));
  }
  compressed_ = (flags & 1) != 0;
  block_pos_ = header_size;
  previous_ = NettraceEvent();
  previous_payload_size_ = 0;
  previous_metadata_id_ = 0;
  if (event_block) {
    ++counts_.event_blocks;
    in_event_block_ = true;
    return true;
  }
  ++counts_.metadata_blocks;
  absl::Status s = ParseMetadataBlock();
  if (!s.ok()) return s;
  return true;
}

absl::Status NettraceReader::ParseStackBlock() {
  NettraceCursor c(block_, block_offset_);
  uint32_t first_id, count;
  if (absl::Status s = c.Fixed(&first_id, "a StackBlock's first id"); !s.ok()) return s;
  if (absl::Status s = c.Fixed(&count, "a StackBlock's stack count"); !s.ok()) return s;
  if (count > c.remaining() / 4) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", c.offset() - 4, ": ", count,
                                            " stacks in a StackBlock with ", c.remaining(),
                                            " bytes left"));
  }
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t size;
    if (absl::Status s = c.Fixed(&size, "a stack's size"); !s.ok()) return s;
    if (absl::Status s = c.Skip(size, "a stack"); !s.ok()) return s;
  }
  ++counts_.stack_blocks;
  counts_.stacks += count;
  return absl::OkStatus();
}

absl::Status NettraceReader::ParseSequencePointBlock() {
  NettraceCursor c(block_, block_offset_);
  int64_t timestamp;
  uint32_t threads;
  if (absl::Status s = c.Fixed(&timestamp, "a sequence point's timestamp"); !s.ok()) return s;
  if (absl::Status s = c.Fixed(&threads, "a sequence point's thread count"); !s.ok()) return s;
  if (absl::Status s = c.Need(static_cast<uint64_t>(threads) * 12, "a sequence point's threads");
      !s.ok()) {
    return s;
  }
  ++counts_.sequence_points;
  return absl::OkStatus();
}

// One event blob at block_pos_, in either encoding; advances block_pos_.
absl::Status NettraceReader::ReadBlob(NettraceEvent* event, uint32_t* metadata_id) {
  NettraceCursor c(block_, block_offset_, block_pos_);
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
    uint32_t id, seq, proc, stack, payload_size;
    uint64_t thread, capture;
    int64_t ts;
    absl::string_view guids;
    // Inside the size just checked: these reads cannot fail.
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
    uint64_t stream_end = block_offset_ + end;
    end += (4 - stream_end % 4) % 4;
    block_pos_ = std::min(end, block_.size());
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
  block_pos_ = c.pos();
  return absl::OkStatus();
}

absl::Status NettraceReader::ParseMetadataBlock() {
  while (block_pos_ < block_.size()) {
    NettraceEvent blob;
    uint32_t blob_metadata_id;
    if (absl::Status s = ReadBlob(&blob, &blob_metadata_id); !s.ok()) return s;
    const uint64_t payload_offset = block_offset_ + (blob.payload.data() - block_.data());
    NettraceCursor c(blob.payload, payload_offset);
    auto meta = std::make_unique<NettraceEventMetadata>();
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
    if (!metadata_.contains(meta->metadata_id) && metadata_.size() >= limits_.max_metadata) {
      return absl::DataLossError(absl::StrCat("nettrace offset ", payload_offset, ": more than ",
                                              limits_.max_metadata, " metadata records"));
    }
    ++counts_.metadata;
    const uint32_t id = meta->metadata_id;
    metadata_[id] = std::move(meta);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> NettraceReader::Next(NettraceEvent* event) {
  if (!header_read_) {
    if (absl::Status s = ReadHeader(); !s.ok()) return s;
  }
  if (!error_.ok()) return error_;
  while (!ended_) {
    if (in_event_block_ && block_pos_ < block_.size()) {
      uint32_t metadata_id;
      if (absl::Status s = ReadBlob(event, &metadata_id); !s.ok()) {
        return Fail(s);
      }
      auto it = metadata_.find(metadata_id);
      if (it == metadata_.end()) {
        return Fail(absl::DataLossError(absl::StrCat("nettrace offset ", event->offset,
                                                     ": an event with metadata id ", metadata_id,
                                                     " that no metadata record defined before")));
      }
      event->metadata = it->second.get();
      ++counts_.events;
      return true;
    }
    in_event_block_ = false;
    auto more = NextBlock();
    if (!more.ok()) return Fail(more.status());
    if (!*more) ended_ = true;
  }
  return false;
}

// ---- Payload decoders ----------------------------------------------------

namespace {

// Sequential reads of an event payload; the first failure sticks.
class PayloadReader {
 public:
  PayloadReader(absl::string_view payload, absl::string_view event)
      : c_(payload, 0), event_(event) {}
  template <typename T>
  T Get() {
    T v{};
    if (status_.ok()) status_ = Annotate(c_.Fixed(&v, "a field"));
    return v;
  }
  uint64_t Pointer(int32_t size) { return size == 4 ? Get<uint32_t>() : Get<uint64_t>(); }
  std::string String() {
    std::string s;
    if (status_.ok()) status_ = Annotate(c_.Utf16z(&s, "a string field"));
    return s;
  }
  const absl::Status& status() const { return status_; }

 private:
  absl::Status Annotate(absl::Status s) {
    if (s.ok()) return s;
    return absl::DataLossError(absl::StrCat("a ", event_, " payload of ", c_.pos() + c_.remaining(),
                                            " bytes ends inside the field at byte ", c_.pos()));
  }
  NettraceCursor c_;
  absl::string_view event_;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<GcStartEvent> DecodeGcStart(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "GCStart");
  GcStartEvent e;
  e.count = r.Get<uint32_t>();
  if (version >= 1) e.depth = r.Get<uint32_t>();
  e.reason = r.Get<uint32_t>();
  if (version >= 1) {
    e.type = r.Get<uint32_t>();
    r.Get<uint16_t>();  // ClrInstanceID
  }
  if (version >= 2) e.client_sequence_number = r.Get<uint64_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<GcEndEvent> DecodeGcEnd(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "GCEnd");
  GcEndEvent e;
  e.count = r.Get<uint32_t>();
  e.depth = r.Get<uint32_t>();
  if (version >= 1) r.Get<uint16_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<GcSuspendEeBeginEvent> DecodeGcSuspendEeBegin(absl::string_view payload,
                                                             uint32_t version) {
  PayloadReader r(payload, "GCSuspendEEBegin");
  GcSuspendEeBeginEvent e;
  if (version == 0) {
    e.reason = r.Get<uint16_t>();
  } else {
    e.reason = r.Get<uint32_t>();
    e.count = r.Get<uint32_t>();
    r.Get<uint16_t>();
  }
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<GcHeapStatsEvent> DecodeGcHeapStats(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "GCHeapStats");
  GcHeapStatsEvent e;
  for (int g = 0; g < 4; ++g) {
    e.generation_size[g] = r.Get<uint64_t>();
    e.total_promoted_size[g] = r.Get<uint64_t>();
  }
  e.finalization_promoted_size = r.Get<uint64_t>();
  e.finalization_promoted_count = r.Get<uint64_t>();
  e.pinned_object_count = r.Get<uint32_t>();
  e.sink_block_count = r.Get<uint32_t>();
  e.gc_handle_count = r.Get<uint32_t>();
  if (version >= 1) r.Get<uint16_t>();
  if (version >= 2) {
    e.generation_size[4] = r.Get<uint64_t>();
    e.total_promoted_size[4] = r.Get<uint64_t>();
  }
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ExceptionThrownEvent> DecodeExceptionThrown(absl::string_view payload,
                                                           uint32_t version,
                                                           int32_t pointer_size) {
  if (version < 1) {
    return absl::InvalidArgumentError("ExceptionThrown version 0 carries no payload");
  }
  PayloadReader r(payload, "ExceptionThrown");
  ExceptionThrownEvent e;
  e.type = r.String();
  e.message = r.String();
  e.eip = r.Pointer(pointer_size);
  e.hresult = r.Get<uint32_t>();
  e.flags = r.Get<uint16_t>();
  r.Get<uint16_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ContentionEvent> DecodeContentionStart(absl::string_view payload, uint32_t version,
                                                      int32_t pointer_size) {
  PayloadReader r(payload, "ContentionStart");
  ContentionEvent e;
  if (version >= 1) {
    e.flags = r.Get<uint8_t>();
    r.Get<uint16_t>();
  }
  if (version >= 2) {
    e.lock_id = r.Pointer(pointer_size);
    e.associated_object_id = r.Pointer(pointer_size);
    e.lock_owner_thread_id = r.Get<uint64_t>();
  }
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ContentionEvent> DecodeContentionStop(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "ContentionStop");
  ContentionEvent e;
  e.flags = r.Get<uint8_t>();
  r.Get<uint16_t>();
  if (version >= 1) e.duration_ns = r.Get<double>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ThreadPoolWorkerThreadEvent> DecodeThreadPoolWorkerThread(absl::string_view payload,
                                                                         uint32_t version) {
  PayloadReader r(payload, "ThreadPoolWorkerThread");
  ThreadPoolWorkerThreadEvent e;
  e.active_worker_thread_count = r.Get<uint32_t>();
  e.retired_worker_thread_count = r.Get<uint32_t>();
  (void)version;  // .NET 10 writes version 0; a ClrInstanceID may follow
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ThreadPoolAdjustmentEvent> DecodeThreadPoolAdjustment(absl::string_view payload,
                                                                     uint32_t version) {
  PayloadReader r(payload, "ThreadPoolWorkerThreadAdjustmentAdjustment");
  ThreadPoolAdjustmentEvent e;
  e.average_throughput = r.Get<double>();
  e.new_worker_thread_count = r.Get<uint32_t>();
  e.reason = r.Get<uint32_t>();
  (void)version;  // .NET 10 writes version 0; a ClrInstanceID may follow
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<MethodEvent> DecodeMethodLoadVerbose(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "MethodLoadVerbose");
  MethodEvent e;
  e.method_id = r.Get<uint64_t>();
  e.module_id = r.Get<uint64_t>();
  e.start_address = r.Get<uint64_t>();
  e.size = r.Get<uint32_t>();
  e.token = r.Get<uint32_t>();
  e.flags = r.Get<uint32_t>();
  e.method_namespace = r.String();
  e.name = r.String();
  e.signature = r.String();
  if (version >= 1) r.Get<uint16_t>();
  if (version >= 2) e.rejit_id = r.Get<uint64_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<MethodEvent> DecodeMethodJittingStarted(absl::string_view payload,
                                                       uint32_t version) {
  PayloadReader r(payload, "MethodJittingStarted");
  MethodEvent e;
  e.method_id = r.Get<uint64_t>();
  e.module_id = r.Get<uint64_t>();
  e.token = r.Get<uint32_t>();
  e.il_size = r.Get<uint32_t>();
  e.method_namespace = r.String();
  e.name = r.String();
  e.signature = r.String();
  if (version >= 1) r.Get<uint16_t>();
  if (!r.status().ok()) return r.status();
  return e;
}

absl::StatusOr<ModuleEvent> DecodeModuleLoad(absl::string_view payload, uint32_t version) {
  PayloadReader r(payload, "ModuleLoad");
  ModuleEvent e;
  e.module_id = r.Get<uint64_t>();
  e.assembly_id = r.Get<uint64_t>();
  e.flags = r.Get<uint32_t>();
  r.Get<uint32_t>();  // Reserved1
  e.il_path = r.String();
  e.native_path = r.String();
  // V1 adds ClrInstanceID, V2 the PDB signatures: not needed.
  (void)version;
  if (!r.status().ok()) return r.status();
  return e;
}

}  // namespace profcpu::collector::dotnet
