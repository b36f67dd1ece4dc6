// Writes NetTrace streams as the runtime does, for tests of what reads them
// (nettrace/reader_test.cc, fold/dotnet_events_summary_test.cc,
// fold/dotnet_runtime_events_test.cc): the Trace object, blocks, metadata
// records, header-compressed event blobs, stack and sequence-point blocks,
// and some runtime payloads.
#ifndef PROFCPU_NETTRACE_TEST_WRITER_H_
#define PROFCPU_NETTRACE_TEST_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/byte_io.h"

namespace profcpu::nettrace::testing_nettrace {

inline void Utf16z(base::ByteWriter& w, absl::string_view ascii) {
  for (char c : ascii) w.U16(static_cast<unsigned char>(c));
  w.U16(0);
}

inline void Varint(std::string* out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    out->push_back(static_cast<char>(byte | (v ? 0x80 : 0)));
  } while (v);
}

// Writes NetTrace streams as the runtime does (format version 4/5).
class Writer {
 public:
  explicit Writer(int32_t pointer_size = 8) {
    out_ = "Nettrace";
    base::ByteWriter w(&out_);
    w.String("!FastSerialization.1");
    out_.push_back(5);
    Type("Trace", 4, 4);
    // SYSTEMTIME 2026-11-25 (Wednesday) 03:30:15.250
    for (uint16_t v : {2026, 11, 3, 25, 3, 30, 15, 250}) w.U16(v);
    w.I64(1000);          // sync QPC
    w.I64(1000000000);    // frequency: ns
    w.U32(static_cast<uint32_t>(pointer_size));
    w.U32(4242);          // pid
    w.U32(2);             // processors
    w.U32(1000);          // sampling rate
    out_.push_back(6);
  }
  void Type(absl::string_view name, int32_t version, int32_t min_version) {
    base::ByteWriter w(&out_);
    out_.push_back(5);
    out_.push_back(1);
    w.U32(static_cast<uint32_t>(version));
    w.U32(static_cast<uint32_t>(min_version));
    w.String(name);
    out_.push_back(6);
  }
  void Block(absl::string_view name, absl::string_view body, int32_t min_version = 2) {
    out_.push_back(5);
    Type(name, 2, min_version);
    base::ByteWriter w(&out_);
    w.U32(static_cast<uint32_t>(body.size()));
    while (out_.size() % 4) out_.push_back(0);
    out_.append(body.data(), body.size());
    out_.push_back(6);
  }
  // A block's object header and size field, and nothing more.
  void BlockSizeOnly(absl::string_view name, uint32_t size) {
    out_.push_back(5);
    Type(name, 2, 2);
    base::ByteWriter(&out_).U32(size);
  }
  void End() { out_.push_back(1); }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

inline std::string BlockHeader(bool compressed) {
  std::string h;
  base::ByteWriter w(&h);
  w.U16(20);
  w.U16(compressed ? 1 : 0);
  w.I64(0);
  w.I64(0);
  return h;
}

inline std::string MetadataPayload(uint32_t id, absl::string_view provider, uint32_t event_id,
                            absl::string_view name, uint32_t version) {
  std::string p;
  base::ByteWriter w(&p);
  w.U32(id);
  Utf16z(w, provider);
  w.U32(event_id);
  Utf16z(w, name);
  w.U64(0x8000);
  w.U32(version);
  w.U32(4);
  w.U32(0);  // no field descriptions
  return p;
}

// A compressed event blob with every field given explicitly (the stack id
// when flags has 8).
inline std::string CompressedBlob(uint8_t flags, uint32_t metadata_id, uint32_t seq_delta,
                           uint64_t capture_thread, uint64_t thread, uint64_t ts_delta,
                           absl::string_view payload, uint32_t stack_id = 7) {
  std::string b;
  b.push_back(static_cast<char>(flags));
  if (flags & 1) Varint(&b, metadata_id);
  if (flags & 2) {
    Varint(&b, seq_delta);
    Varint(&b, capture_thread);
    Varint(&b, 1);  // processor
  }
  if (flags & 4) Varint(&b, thread);
  if (flags & 8) Varint(&b, stack_id);
  Varint(&b, ts_delta);
  if (flags & 16) b.append(16, '\xaa');
  if (flags & 32) b.append(16, '\xbb');
  if (flags & 128) Varint(&b, payload.size());
  b.append(payload.data(), payload.size());
  return b;
}

// A StackBlock's body: stacks with ids from `first_id`, each a list of
// addresses (the leaf first) written `pointer_size` bytes each.
inline std::string StackBlockBody(uint32_t first_id,
                                  const std::vector<std::vector<uint64_t>>& stacks,
                                  int32_t pointer_size = 8) {
  std::string body;
  base::ByteWriter w(&body);
  w.U32(first_id);
  w.U32(static_cast<uint32_t>(stacks.size()));
  for (const std::vector<uint64_t>& stack : stacks) {
    w.U32(static_cast<uint32_t>(stack.size() * pointer_size));
    for (uint64_t address : stack) {
      if (pointer_size == 8) {
        w.U64(address);
      } else {
        w.U32(static_cast<uint32_t>(address));
      }
    }
  }
  return body;
}

// An SPBlock's body: a timestamp and one thread's sequence number.
inline std::string SequencePointBody(int64_t timestamp) {
  std::string body;
  base::ByteWriter w(&body);
  w.I64(timestamp);
  w.U32(1);
  w.U64(500);
  w.U32(3);
  return body;
}

// GCAllocationTick's payload of `version` (0 to 4, ClrEtwAll.man's layouts).
inline std::string GcAllocationTickPayload(uint32_t version, uint64_t amount, uint32_t kind,
                                           absl::string_view type_name, uint32_t heap_index,
                                           uint64_t object_size, int32_t pointer_size = 8) {
  std::string p;
  base::ByteWriter w(&p);
  auto pointer = [&](uint64_t v) {
    if (pointer_size == 8) {
      w.U64(v);
    } else {
      w.U32(static_cast<uint32_t>(v));
    }
  };
  w.U32(static_cast<uint32_t>(amount));
  w.U32(kind);
  if (version >= 1) w.U16(7);
  if (version >= 2) {
    w.U64(amount);
    pointer(0x7f00aa000010);  // TypeID
    Utf16z(w, type_name);
    w.U32(heap_index);
  }
  if (version >= 3) pointer(0x7e0000001000);  // Address
  if (version >= 4) w.U64(object_size);
  return p;
}

// GCStart (V2) and ExceptionThrown (V1) payloads.
inline std::string GcStartPayload(uint32_t count, uint32_t depth, uint32_t reason) {
  std::string p;
  base::ByteWriter w(&p);
  w.U32(count);
  w.U32(depth);
  w.U32(reason);
  w.U32(0);
  w.U16(7);
  w.U64(99);
  return p;
}

inline std::string ExceptionPayload(absl::string_view type, absl::string_view message) {
  std::string p;
  base::ByteWriter w(&p);
  Utf16z(w, type);
  Utf16z(w, message);
  w.U64(0x1234);
  w.U32(0x80131500);
  w.U16(16);
  w.U16(7);
  return p;
}

}  // namespace profcpu::nettrace::testing_nettrace

#endif  // PROFCPU_NETTRACE_TEST_WRITER_H_
