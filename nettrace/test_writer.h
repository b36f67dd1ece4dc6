// Writes NetTrace streams as the runtime does, for tests of what reads them
// (nettrace/reader_test.cc, fold/dotnet_events_summary_test.cc,
// fold/dotnet_runtime_events_test.cc): the Trace object, blocks, metadata
// records and header-compressed event blobs.
#ifndef PROFCPU_NETTRACE_TEST_WRITER_H_
#define PROFCPU_NETTRACE_TEST_WRITER_H_

#include <cstdint>
#include <string>

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

// A compressed event blob with every field given explicitly.
inline std::string CompressedBlob(uint8_t flags, uint32_t metadata_id, uint32_t seq_delta,
                           uint64_t capture_thread, uint64_t thread, uint64_t ts_delta,
                           absl::string_view payload) {
  std::string b;
  b.push_back(static_cast<char>(flags));
  if (flags & 1) Varint(&b, metadata_id);
  if (flags & 2) {
    Varint(&b, seq_delta);
    Varint(&b, capture_thread);
    Varint(&b, 1);  // processor
  }
  if (flags & 4) Varint(&b, thread);
  if (flags & 8) Varint(&b, 7);  // stack id
  Varint(&b, ts_delta);
  if (flags & 16) b.append(16, '\xaa');
  if (flags & 32) b.append(16, '\xbb');
  if (flags & 128) Varint(&b, payload.size());
  b.append(payload.data(), payload.size());
  return b;
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
