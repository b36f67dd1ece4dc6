#include "nettrace/reader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nettrace/fast_serialization.h"

namespace profcpu::nettrace {
namespace {


// The read-ahead's first size and the most it grows to.
constexpr size_t kFirstReadAhead = 256;
constexpr size_t kMaxReadAhead = 64 << 10;
// A block's buffer's first size when the block claims more: doubled as bytes arrive.
constexpr size_t kFirstChunk = 4 << 10;

constexpr absl::string_view kNettraceMagic = "Nettrace";
constexpr absl::string_view kSerializationHeader = "!FastSerialization.1";

std::string Printable(absl::string_view bytes) {
  return absl::CHexEscape(bytes.substr(0, 32));
}

}  // namespace

NettraceReader::NettraceReader(NettraceSource* source, NettraceLimits limits)
    : source_(source), limits_(limits), stacks_(limits.max_stack_bytes) {}

absl::Status NettraceReader::Fail(absl::Status status) {
  if (error_.ok()) error_ = status;
  return error_;
}

absl::Status NettraceReader::EndsInside(absl::string_view what, size_t got, size_t n) const {
  return absl::DataLossError(absl::StrCat("nettrace offset ", offset_, ": the stream ends inside ",
                                          what, " (", got, " of its ", n, " bytes)"));
}

absl::StatusOr<bool> NettraceReader::ReadAhead() {
  ahead_pos_ = 0;
  ahead_end_ = 0;
  if (ahead_.empty()) ahead_.resize(kFirstReadAhead);
  absl::StatusOr<size_t> r = source_->Read(ahead_.data(), ahead_.size());
  if (!r.ok()) return r.status();
  ahead_end_ = std::min(*r, ahead_.size());
  // A source that filled it has more at hand: ask for more next time (the
  // buffer stays within twice what one Read gave).
  if (ahead_end_ == ahead_.size() && ahead_.size() < kMaxReadAhead) {
    ahead_.resize(ahead_.size() * 2);
  }
  return ahead_end_ > 0;
}

absl::Status NettraceReader::FillSmall(size_t n, char* out, absl::string_view what) {
  size_t got = 0;
  while (got < n) {
    if (ahead_pos_ == ahead_end_) {
      absl::StatusOr<bool> more = ReadAhead();
      if (!more.ok()) return more.status();
      if (!*more) return EndsInside(what, got, n);
    }
    const size_t take = std::min(n - got, ahead_end_ - ahead_pos_);
    std::memcpy(out + got, ahead_.data() + ahead_pos_, take);
    ahead_pos_ += take;
    got += take;
    offset_ += take;
  }
  return absl::OkStatus();
}

absl::Status NettraceReader::Fill(size_t n, std::string* out, absl::string_view what) {
  // Grown as bytes arrive, not to `n` at once: a size field that promises
  // more than the stream holds costs no more memory than the bytes sent
  // (at most twice them, or kFirstChunk).
  out->clear();
  size_t got = 0;
  auto make_room = [&](size_t need) {
    if (out->size() >= got + need) return;
    const size_t grow = std::max(need, std::min(n - got, std::max(kFirstChunk, got)));
    out->resize(got + grow);
  };
  while (got < n) {
    if (ahead_pos_ != ahead_end_) {
      const size_t take = std::min(n - got, ahead_end_ - ahead_pos_);
      make_room(take);
      std::memcpy(out->data() + got, ahead_.data() + ahead_pos_, take);
      ahead_pos_ += take;
      got += take;
      offset_ += take;
    } else if (n - got < std::max(ahead_.size(), kFirstReadAhead)) {
      // A small piece: through the read-ahead, with what follows it.
      absl::StatusOr<bool> more = ReadAhead();
      if (!more.ok()) return more.status();
      if (!*more) return EndsInside(what, got, n);
    } else {
      // Much still to come (a block's body): straight into `out`.
      make_room(1);
      absl::StatusOr<size_t> r = source_->Read(out->data() + got, out->size() - got);
      if (!r.ok()) return r.status();
      if (*r == 0) return EndsInside(what, got, n);
      const size_t take = std::min(*r, out->size() - got);
      got += take;
      offset_ += take;
    }
  }
  out->resize(n);
  return absl::OkStatus();
}

absl::StatusOr<uint8_t> NettraceReader::Tag(absl::string_view what) {
  char byte;
  if (absl::Status s = FillSmall(1, &byte, what); !s.ok()) return s;
  return static_cast<uint8_t>(byte);
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
  char fixed[12];
  if (absl::Status s = FillSmall(sizeof(fixed), fixed, "an object type"); !s.ok()) return s;
  uint32_t name_size;
  std::memcpy(version, fixed, 4);
  std::memcpy(min_version, fixed + 4, 4);
  std::memcpy(&name_size, fixed + 8, 4);
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
  char size_bytes[4];
  if (absl::Status s = FillSmall(4, size_bytes, "a block's size"); !s.ok()) return s;
  uint32_t size;
  std::memcpy(&size, size_bytes, 4);
  if (size > limits_.max_block_bytes) {
    return absl::DataLossError(absl::StrCat("nettrace offset ", offset_ - 4, ": a ", name, " of ",
                                            size, " bytes (at most ", limits_.max_block_bytes,
                                            ")"));
  }
  char padding[3];
  if (absl::Status s = FillSmall((4 - offset_ % 4) % 4, padding, "a block's alignment padding");
      !s.ok()) {
    return s;
  }
  block_offset_ = offset_;
  if (absl::Status s = Fill(size, &block_, name); !s.ok()) return s;
  if (absl::Status s = ExpectTag(kEndObject, "the end of a block object"); !s.ok()) return s;

  if (stack_block) {
    absl::StatusOr<uint32_t> stacks =
        ParseStackBlock(block_, block_offset_, trace_.pointer_size,
                        [this](uint64_t id, absl::string_view addresses) {
                          if (!stacks_.Add(id, addresses, trace_.pointer_size)) {
                            ++counts_.stacks_not_kept;
                          }
                        });
    if (!stacks.ok()) return stacks.status();
    ++counts_.stack_blocks;
    counts_.stacks += *stacks;
    return true;
  }
  if (sp_block) {
    if (absl::Status s = ParseSequencePointBlock(block_, block_offset_); !s.ok()) return s;
    ++counts_.sequence_points;
    // The runtime forgets its stacks here and numbers them from 1 again
    // (ep-file.c, ep_file_write_sequence_point).
    stacks_.Clear();
    return true;
  }
  // Event and metadata blocks: the header, then event blobs.
  absl::StatusOr<EventBlockHeader> header = ParseEventBlockHeader(block_, block_offset_, name);
  if (!header.ok()) return header.status();
  block_pos_ = header->size;
  blobs_.StartBlock(header->compressed);
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

absl::Status NettraceReader::ParseMetadataBlock() {
  while (block_pos_ < block_.size()) {
    NettraceEvent blob;
    uint32_t blob_metadata_id;
    if (absl::Status s = blobs_.Read(block_, block_offset_, &block_pos_, &blob, &blob_metadata_id);
        !s.ok()) {
      return s;
    }
    const uint64_t payload_offset = block_offset_ + (blob.payload.data() - block_.data());
    auto meta = std::make_unique<NettraceEventMetadata>();
    if (absl::Status s = ParseMetadataRecord(blob.payload, payload_offset, meta.get()); !s.ok()) {
      return s;
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
      if (absl::Status s = blobs_.Read(block_, block_offset_, &block_pos_, event, &metadata_id);
          !s.ok()) {
        return Fail(s);
      }
      auto it = metadata_.find(metadata_id);
      if (it == metadata_.end()) {
        return Fail(absl::DataLossError(absl::StrCat("nettrace offset ", event->offset,
                                                     ": an event with metadata id ", metadata_id,
                                                     " that no metadata record defined before")));
      }
      event->metadata = it->second.get();
      event->stack = {};
      if (event->stack_id != 0 && !stacks_.Find(event->stack_id, &event->stack)) {
        ++counts_.events_stack_unknown;
      }
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

}  // namespace profcpu::nettrace
