#include "nettrace/stream_filter.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/byte_io.h"
#include "nettrace/blocks.h"
#include "nettrace/fast_serialization.h"

namespace profcpu::nettrace {
namespace {

// "Nettrace", then "!FastSerialization.1" with its u32 length.
constexpr size_t kMagicBytes = 8 + 4 + 20;

uint32_t U32At(absl::string_view bytes, size_t at) {
  uint32_t v;
  std::memcpy(&v, bytes.data() + at, 4);
  return v;
}

// An object's type at `at` of `bytes` (BeginPrivateObject, NullReference,
// version, min version, name, EndObject): its length and name, 0 when more
// bytes are needed.
absl::StatusOr<size_t> TypeAt(absl::string_view bytes, size_t at, uint64_t offset,
                              absl::string_view* name) {
  if (bytes.size() < at + 14) return 0;
  if (static_cast<uint8_t>(bytes[at]) != kBeginPrivateObject ||
      static_cast<uint8_t>(bytes[at + 1]) != kNullReference) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", offset + at,
                                            ": expected an object's type"));
  }
  const uint32_t name_size = U32At(bytes, at + 10);
  if (name_size > kMaxTypeNameBytes) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", offset + at + 10,
                                            ": a type name of ", name_size, " bytes"));
  }
  const size_t end = at + 14 + name_size + 1;
  if (bytes.size() < end) return 0;
  if (static_cast<uint8_t>(bytes[end - 1]) != kEndObject) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", offset + end - 1,
                                            ": expected the end of an object's type"));
  }
  *name = bytes.substr(at + 14, name_size);
  return end - at;
}

}  // namespace

NettraceStreamFilter::NettraceStreamFilter(KeepFn keep, size_t max_block_bytes,
                                           size_t max_metadata)
    : keep_(std::move(keep)), max_block_bytes_(max_block_bytes), max_metadata_(max_metadata) {}

void NettraceStreamFilter::Emit(absl::string_view bytes, std::string* out) {
  out->append(bytes.data(), bytes.size());
  out_offset_ += bytes.size();
}

uint64_t NettraceStreamFilter::ToMonotonicNs(int64_t qpc) const {
  if (qpc <= 0) return 0;
  if (qpc_frequency_ == 1'000'000'000) return static_cast<uint64_t>(qpc);
  const unsigned __int128 ns =
      static_cast<unsigned __int128>(qpc) * 1'000'000'000u / static_cast<uint64_t>(qpc_frequency_);
  return ns > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(ns);
}

absl::Status NettraceStreamFilter::Feed(absl::string_view bytes, std::string* out) {
  if (state_ == State::kFailed) return error_;
  if (state_ == State::kEnded) return absl::OkStatus();  // nothing follows the end tag
  pending_.append(bytes.data(), bytes.size());
  while (state_ != State::kEnded) {
    absl::StatusOr<size_t> used = state_ == State::kHeader ? TakeHeader(out) : TakeObject(out);
    if (!used.ok()) {
      state_ = State::kFailed;
      error_ = used.status();
      pending_.clear();
      return error_;
    }
    if (*used == 0) break;
    pending_.erase(0, *used);
    in_offset_ += *used;
  }
  if (state_ == State::kEnded) pending_.clear();
  return absl::OkStatus();
}

absl::StatusOr<size_t> NettraceStreamFilter::TakeHeader(std::string* out) {
  const absl::string_view p = pending_;
  if (p.size() < kMagicBytes + 1) return 0;
  if (p.substr(0, 8) != "Nettrace") {
    return absl::DataLossError("nettrace offset 0: not a NetTrace stream");
  }
  if (static_cast<uint8_t>(p[kMagicBytes]) != kBeginPrivateObject) {
    return absl::DataLossError(
        absl::StrCat("nettrace offset ", kMagicBytes, ": expected the Trace object"));
  }
  absl::string_view name;
  absl::StatusOr<size_t> type = TypeAt(p, kMagicBytes + 1, 0, &name);
  if (!type.ok() || *type == 0) return type;
  const size_t fields = kMagicBytes + 1 + *type;
  if (p.size() < fields + kTraceFieldBytes + 1) return 0;
  if (name != "Trace" || static_cast<uint8_t>(p[fields + kTraceFieldBytes]) != kEndObject) {
    return absl::DataLossError(
        absl::StrCat("nettrace offset ", kMagicBytes, ": not a Trace object"));
  }
  int64_t frequency;
  std::memcpy(&frequency, p.data() + fields + 24, 8);
  if (frequency > 0) qpc_frequency_ = frequency;
  const size_t size = fields + kTraceFieldBytes + 1;
  Emit(p.substr(0, size), out);
  state_ = State::kObjects;
  return size;
}

absl::StatusOr<size_t> NettraceStreamFilter::TakeObject(std::string* out) {
  const absl::string_view p = pending_;
  if (p.empty()) return 0;
  const uint8_t tag = static_cast<uint8_t>(p[0]);
  if (tag == kNullReference) {
    Emit(p.substr(0, 1), out);
    state_ = State::kEnded;
    return 1;
  }
  if (tag != kBeginPrivateObject) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", in_offset_,
                                            ": expected an object or the end of the stream, "
                                            "found byte ",
                                            tag));
  }
  absl::string_view name;
  absl::StatusOr<size_t> type = TypeAt(p, 1, in_offset_, &name);
  if (!type.ok() || *type == 0) return type;
  const size_t size_at = 1 + *type;
  if (p.size() < size_at + 4) return 0;
  const uint32_t size = U32At(p, size_at);
  if (size > max_block_bytes_) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", in_offset_ + size_at, ": a block of ",
                                            size, " bytes (at most ", max_block_bytes_, ")"));
  }
  // The body starts at a 4-byte offset of the stream (input here, output
  // when written again).
  const size_t body_at = size_at + 4 + (4 - (in_offset_ + size_at + 4) % 4) % 4;
  if (p.size() < body_at + size + 1) return 0;
  if (static_cast<uint8_t>(p[body_at + size]) != kEndObject) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", in_offset_ + body_at + size,
                                            ": expected the end of a block object"));
  }
  const absl::string_view body = p.substr(body_at, size);
  std::string rewritten;
  absl::string_view kept = body;
  if (name == "MetadataBlock") {
    if (absl::Status s = LearnMetadata(body, in_offset_ + body_at); !s.ok()) return s;
  } else if (name == "EventBlock") {
    if (absl::Status s = RewriteEventBlock(body, in_offset_ + body_at, &rewritten); !s.ok()) {
      return s;
    }
    kept = rewritten;
  }
  const size_t used = body_at + size + 1;
  // An event block whose every event was dropped goes (its header alone
  // would say nothing).
  if (name == "EventBlock" && kept.empty()) return used;
  if (name != "EventBlock" && on_pass_) on_pass_(kept.size());
  std::string head(p.substr(0, size_at));
  base::ByteWriter(&head).U32(static_cast<uint32_t>(kept.size()));
  Emit(head, out);
  Emit(std::string((4 - out_offset_ % 4) % 4, '\0'), out);
  Emit(kept, out);
  Emit(std::string(1, static_cast<char>(kEndObject)), out);
  return used;
}

absl::Status NettraceStreamFilter::LearnMetadata(absl::string_view body, uint64_t body_offset) {
  absl::StatusOr<EventBlockHeader> header = ParseEventBlockHeader(body, body_offset, "MetadataBlock");
  if (!header.ok()) return header.status();
  EventBlobDecoder blobs;
  blobs.StartBlock(header->compressed);
  size_t pos = header->size;
  while (pos < body.size()) {
    NettraceEvent blob;
    uint32_t blob_metadata_id;
    if (absl::Status s = blobs.Read(body, body_offset, &pos, &blob, &blob_metadata_id); !s.ok()) {
      return s;
    }
    auto meta = std::make_unique<NettraceEventMetadata>();
    const uint64_t payload_offset = body_offset + (blob.payload.data() - body.data());
    if (absl::Status s = ParseMetadataRecord(blob.payload, payload_offset, meta.get()); !s.ok()) {
      return s;
    }
    if (!metadata_.contains(meta->metadata_id) && metadata_.size() >= max_metadata_) {
      return absl::DataLossError(absl::StrCat("nettrace offset ", payload_offset, ": more than ",
                                              max_metadata_, " metadata records"));
    }
    const uint32_t id = meta->metadata_id;
    metadata_[id] = std::move(meta);
  }
  return absl::OkStatus();
}

absl::Status NettraceStreamFilter::RewriteEventBlock(absl::string_view body, uint64_t body_offset,
                                                     std::string* kept) {
  absl::StatusOr<EventBlockHeader> header = ParseEventBlockHeader(body, body_offset, "EventBlock");
  if (!header.ok()) return header.status();
  EventBlobDecoder blobs;
  blobs.StartBlock(header->compressed);
  EventBlobEncoder encoder;
  encoder.StartBlock();
  std::string events;
  bool dropped_any = false;
  size_t pos = header->size;
  while (pos < body.size()) {
    const size_t start = pos;
    NettraceEvent event;
    uint32_t metadata_id;
    if (absl::Status s = blobs.Read(body, body_offset, &pos, &event, &metadata_id); !s.ok()) {
      return s;
    }
    auto it = metadata_.find(metadata_id);
    // An event the filter cannot name is kept (the reader will say what is
    // wrong with it).
    const bool keep = it == metadata_.end() || !header->compressed ||
                      keep_(*it->second, event, pos - start, ToMonotonicNs(event.timestamp));
    if (!keep) {
      ++events_dropped_;
      dropped_any = true;
      continue;
    }
    ++events_kept_;
    if (header->compressed) encoder.Write(event, metadata_id, &events);
  }
  if (!dropped_any) {
    kept->assign(body.data(), body.size());
  } else if (!events.empty()) {
    kept->assign(body.data(), header->size);
    kept->append(events);
  } else {
    kept->clear();
  }
  return absl::OkStatus();
}

}  // namespace profcpu::nettrace
