// PLACEHOLDER until the store's row_binary lands (integrator).
#ifndef PROFCPU_FLEET_STORE_ROW_BINARY_H_
#define PROFCPU_FLEET_STORE_ROW_BINARY_H_
#include <cstdint>
#include <string>
#include <string_view>
#include "absl/types/span.h"
namespace profcpu::fleet {
void AppendUInt32(std::string* out, uint32_t v);
void AppendUInt64(std::string* out, uint64_t v);
void AppendString(std::string* out, std::string_view s);
void AppendUInt64Array(std::string* out, absl::Span<const uint64_t> values);
}  // namespace profcpu::fleet
#endif
