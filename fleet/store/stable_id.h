// Ids that every agent computes alike for the same frame or stack, so each
// is stored once however many nodes see it: FNV-1a 64 over the fields'
// bytes, each field followed by a 0 byte.
#ifndef PROFCPU_FLEET_STORE_STABLE_ID_H_
#define PROFCPU_FLEET_STORE_STABLE_ID_H_

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "absl/types/span.h"

namespace profcpu::fleet {

uint64_t StableId(std::initializer_list<std::string_view> fields);
// A stack's id: StableId over its frame ids' 8-byte little-endian encodings,
// root first.
uint64_t StackId(absl::Span<const uint64_t> frame_ids);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_STORE_STABLE_ID_H_
