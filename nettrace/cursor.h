// Bounds-checked little-endian reads inside one block of a NetTrace stream
// (or one event's payload), shared by the block parsers (blocks.h) and the
// payload decoders (runtime_events.h). Nothing is read past the view it was
// given: every read first checks what remains, and a failure names the
// stream offset, so a hostile length cannot reach memory it does not own.
#ifndef PROFCPU_NETTRACE_CURSOR_H_
#define PROFCPU_NETTRACE_CURSOR_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/utf16.h"

namespace profcpu::nettrace {

// `base` is the view's offset in the stream, for error messages.
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
      // Inline, not through Fixed: event headers are mostly these bytes.
      if (pos_ >= data_.size()) return Need(1, what);
      const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
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
    // One test per unit for the terminator; whether all were ASCII is the
    // units or-ed together, tested once (every name of every metadata
    // record goes through here, on every read of a stream).
    const auto* units = reinterpret_cast<const unsigned char*>(data_.data()) + pos_;
    const size_t count = remaining() / 2;
    unsigned all_bits = 0;
    for (size_t i = 0; i < count; ++i) {
      const unsigned unit = units[2 * i] | (unsigned{units[2 * i + 1]} << 8);
      if (unit == 0) {
        // The names the runtime writes are ASCII: copied a byte a unit, in
        // place, rather than converted a code point at a time.
        if (all_bits < 0x80) {
          out->resize(i);
          for (size_t k = 0; k < i; ++k) (*out)[k] = static_cast<char>(units[2 * k]);
        } else {
          *out = base::Utf16LeToUtf8(data_.substr(pos_, 2 * i));
        }
        pos_ += 2 * i + 2;
        return absl::OkStatus();
      }
      all_bits |= unit;
    }
    return absl::DataLossError(absl::StrCat("nettrace offset ", offset(), ": ", what,
                                            " has no NUL terminator before the end of its data"));
  }

 private:
  absl::string_view data_;
  uint64_t base_;
  size_t pos_;
};

}  // namespace profcpu::nettrace

#endif  // PROFCPU_NETTRACE_CURSOR_H_
