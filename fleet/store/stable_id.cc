#include "fleet/store/stable_id.h"

namespace profcpu::fleet {
namespace {

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t Mix(uint64_t hash, unsigned char byte) { return (hash ^ byte) * kFnvPrime; }

}  // namespace

uint64_t StableId(std::initializer_list<std::string_view> fields) {
  uint64_t hash = kFnvOffset;
  bool first = true;
  for (std::string_view field : fields) {
    if (!first) hash = Mix(hash, 0);
    first = false;
    for (char c : field) hash = Mix(hash, static_cast<unsigned char>(c));
  }
  return hash;
}

uint64_t StackId(absl::Span<const uint64_t> frame_ids) {
  uint64_t hash = kFnvOffset;
  for (uint64_t id : frame_ids) {
    for (int i = 0; i < 8; ++i) hash = Mix(hash, static_cast<unsigned char>(id >> (8 * i)));
  }
  return hash;
}

}  // namespace profcpu::fleet
