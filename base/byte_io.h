// Little-endian encoding and bounds-checked decoding of fixed-size integers and
// length-prefixed strings. Used by the recording and the symbol snapshot; the
// reader treats its input as hostile: every read is checked, none can overrun.
#ifndef PROFCPU_BASE_BYTE_IO_H_
#define PROFCPU_BASE_BYTE_IO_H_

#include <cstdint>
#include <cstring>
#include <string>
#include "absl/strings/string_view.h"

namespace profcpu::base {

class ByteWriter {
 public:
  explicit ByteWriter(std::string* out) : out_(out) {}
  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U16(uint16_t v) { Raw(v); }
  void U32(uint32_t v) { Raw(v); }
  void U64(uint64_t v) { Raw(v); }
  void I64(int64_t v) { Raw(v); }
  // u32 length, then the bytes (no terminator).
  void String(absl::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_->append(s.data(), s.size());
  }

 private:
  template <typename T>
  void Raw(T v) {
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "little-endian host assumed");
    char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    out_->append(bytes, sizeof(T));
  }
  std::string* out_;
};

// Reads from a byte span. After any failed read, ok() is false and every later
// read returns zero / empty, so callers can decode a whole struct and check once.
class ByteReader {
 public:
  explicit ByteReader(absl::string_view data) : data_(data) {}
  uint8_t U8() { return Raw<uint8_t>(); }
  uint16_t U16() { return Raw<uint16_t>(); }
  uint32_t U32() { return Raw<uint32_t>(); }
  uint64_t U64() { return Raw<uint64_t>(); }
  int64_t I64() { return Raw<int64_t>(); }
  std::string String() { return std::string(StringView()); }
  // The same bytes, valid as long as the data read.
  absl::string_view StringView() {
    uint32_t size = U32();
    if (!ok_ || size > data_.size() - pos_) {
      ok_ = false;
      return {};
    }
    absl::string_view s = data_.substr(pos_, size);
    pos_ += size;
    return s;
  }
  bool ok() const { return ok_; }
  size_t remaining() const { return ok_ ? data_.size() - pos_ : 0; }

 private:
  template <typename T>
  T Raw() {
    if (!ok_ || sizeof(T) > data_.size() - pos_) {
      ok_ = false;
      return T{};
    }
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  absl::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_BYTE_IO_H_
