// ClickHouse's RowBinary input format, written by hand: the agent's rows go
// to the store in it (INSERT ... FORMAT RowBinary), as it is the cheapest
// format for both sides to produce and parse. Values of a row are appended
// in the table's column order; there are no separators.
#ifndef PROFCPU_FLEET_STORE_ROW_BINARY_H_
#define PROFCPU_FLEET_STORE_ROW_BINARY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/types/span.h"

namespace profcpu::fleet {

// String: its length as an unsigned LEB128 varint, then its bytes.
void AppendString(std::string* out, std::string_view value);
// UInt64: 8 bytes, little-endian.
void AppendUInt64(std::string* out, uint64_t value);
// UInt32 and DateTime (seconds since the epoch, UTC): 4 bytes, little-endian.
void AppendUInt32(std::string* out, uint32_t value);
// Array(UInt64): the element count as a varint, then each element.
void AppendUInt64Array(std::string* out, absl::Span<const uint64_t> values);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_STORE_ROW_BINARY_H_
