// The stacks a NetTrace stream's StackBlocks define, kept by id for the
// events that name them (NettraceEvent::stack).
//
// How the runtime numbers them (dotnet/runtime src/native/eventpipe/ep-file.c,
// file_get_stack_id and ep_file_write_sequence_point): each distinct stack
// gets the next id, from 1, and is written to a StackBlock before any event
// naming it; at each sequence point the runtime forgets its stacks and starts
// again from 1 (the format's spec: an event may only name a stack with no
// sequence point between them). So the ids of one stretch between sequence
// points are contiguous, block after block, and the cache is one flat array
// of addresses with an (offset, length) per id: no allocation per stack once
// the arrays have grown, a lookup is an index.
//
// Bounded: the addresses and the per-id entries together take at most
// `max_bytes` (the arrays' spare capacity aside); past it, and for a stack
// whose id does not continue the stretch (no runtime writes those), the
// stack is not kept and events naming it get none.
#ifndef PROFCPU_NETTRACE_STACK_CACHE_H_
#define PROFCPU_NETTRACE_STACK_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace profcpu::nettrace {

class NettraceStackCache {
 public:
  explicit NettraceStackCache(size_t max_bytes);

  // Keeps the stack with `id`: `addresses` holds `pointer_size`-byte (4 or 8)
  // little-endian addresses, the leaf first. A later definition of a held id
  // replaces it. False when it is not kept (over the budget, or an id that
  // does not continue the stretch).
  bool Add(uint64_t id, absl::string_view addresses, int32_t pointer_size);

  // A sequence point: the ids start again.
  void Clear();

  // The stack with `id`, leaf first; false when it is not held. The span is
  // valid until the next Add or Clear.
  bool Find(uint32_t id, absl::Span<const uint64_t>* stack) const;

  // What the addresses and entries take, as counted against the budget.
  size_t bytes() const { return (addresses_.size() + entries_.size()) * sizeof(uint64_t); }

 private:
  struct Entry {
    uint32_t start = 0;  // in addresses_
    uint32_t size = 0;   // kNotHeld: the id was redefined and not kept
  };
  static constexpr uint32_t kNotHeld = UINT32_MAX;

  size_t max_bytes_;
  uint64_t first_id_ = 0;      // the id of entries_[0]
  std::vector<Entry> entries_;  // one per id, from first_id_
  std::vector<uint64_t> addresses_;
};

}  // namespace profcpu::nettrace

#endif  // PROFCPU_NETTRACE_STACK_CACHE_H_
