// Ids of frames and stacks that every agent computes alike, with no
// coordination: a hash of what the row says. An agent that meets a stack it
// has not sent to its shard yet writes it once; another node's agent writing
// the same stack to the same shard writes the same id, and the stacks and
// frames tables (ReplacingMergeTree ORDER BY id) keep one row of it.
#ifndef PROFCPU_FLEET_STORE_STABLE_ID_H_
#define PROFCPU_FLEET_STORE_STABLE_ID_H_

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "absl/types/span.h"

namespace profcpu::fleet {

// FNV-1a 64 over the fields' bytes, a 0 byte between fields (so {"ab", "c"}
// and {"a", "bc"} differ). Frame id = StableId({name, module, build_id}).
// Node shard = StableId({node}) % number of -store URLs.
uint64_t StableId(std::initializer_list<std::string_view> fields);

// A stack's id: FNV-1a 64 over its frame ids' 8-byte little-endian
// encodings, root first.
uint64_t StackId(absl::Span<const uint64_t> frame_ids);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_STORE_STABLE_ID_H_
