#include "nettrace/stack_cache.h"

#include <algorithm>
#include <cstring>

namespace profcpu::nettrace {
namespace {

// Entries hold 32-bit offsets into the addresses: a budget past 2^32
// addresses would overflow them (and no stream needs 32 GiB of stacks).
constexpr size_t kMaxBudget = size_t{1} << 34;

}  // namespace

NettraceStackCache::NettraceStackCache(size_t max_bytes)
    : max_bytes_(std::min(max_bytes, kMaxBudget)) {}

void NettraceStackCache::Clear() {
  // The arrays keep their capacity: the next stretch reuses it.
  entries_.clear();
  addresses_.clear();
  first_id_ = 0;
}

bool NettraceStackCache::Add(uint64_t id, absl::string_view addresses, int32_t pointer_size) {
  if (pointer_size != 4 && pointer_size != 8) return false;
  if (entries_.empty()) first_id_ = id;
  if (id < first_id_ || id - first_id_ > entries_.size()) return false;  // a gap
  const size_t index = static_cast<size_t>(id - first_id_);
  const bool redefined = index < entries_.size();
  const size_t count = addresses.size() / static_cast<size_t>(pointer_size);
  const size_t new_bytes = (count + (redefined ? 0 : 1)) * sizeof(uint64_t);
  if (new_bytes > max_bytes_ || bytes() > max_bytes_ - new_bytes) {
    // Not kept: an older definition must not answer for it either.
    if (redefined) entries_[index].size = kNotHeld;
    return false;
  }
  Entry entry{static_cast<uint32_t>(addresses_.size()), static_cast<uint32_t>(count)};
  const size_t start = addresses_.size();
  addresses_.resize(start + count);
  if (count == 0) {
    // An event without frames: held, and empty.
  } else if (pointer_size == 8) {
    std::memcpy(addresses_.data() + start, addresses.data(), count * sizeof(uint64_t));
  } else {
    for (size_t i = 0; i < count; ++i) {
      uint32_t address;
      std::memcpy(&address, addresses.data() + i * 4, 4);
      addresses_[start + i] = address;
    }
  }
  if (redefined) {
    entries_[index] = entry;
  } else {
    entries_.push_back(entry);
  }
  return true;
}

bool NettraceStackCache::Find(uint32_t id, absl::Span<const uint64_t>* stack) const {
  if (id < first_id_ || id - first_id_ >= entries_.size()) return false;
  const Entry& entry = entries_[static_cast<size_t>(id - first_id_)];
  if (entry.size == kNotHeld) return false;
  *stack = absl::MakeConstSpan(addresses_.data() + entry.start, entry.size);
  return true;
}

}  // namespace profcpu::nettrace
