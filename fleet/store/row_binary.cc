#include "fleet/store/row_binary.h"

namespace profcpu::fleet {
namespace {

void AppendVarUInt(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

template <typename T>
void AppendLittleEndian(std::string* out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}

}  // namespace

void AppendString(std::string* out, std::string_view value) {
  AppendVarUInt(out, value.size());
  out->append(value);
}

void AppendUInt64(std::string* out, uint64_t value) { AppendLittleEndian(out, value); }

void AppendUInt32(std::string* out, uint32_t value) { AppendLittleEndian(out, value); }

void AppendUInt64Array(std::string* out, absl::Span<const uint64_t> values) {
  AppendVarUInt(out, values.size());
  for (uint64_t v : values) AppendLittleEndian(out, v);
}

}  // namespace profcpu::fleet
