#include "fleet/store/stable_id.h"

namespace profcpu::fleet {
namespace {

constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;
constexpr uint64_t kPrime = 0x100000001b3ULL;

uint64_t Mix(uint64_t hash, unsigned char byte) { return (hash ^ byte) * kPrime; }

}  // namespace

uint64_t StableId(std::initializer_list<std::string_view> fields) {
  uint64_t hash = kOffsetBasis;
  for (std::string_view field : fields) {
    for (char c : field) hash = Mix(hash, static_cast<unsigned char>(c));
    hash = Mix(hash, 0);
  }
  return hash;
}

uint64_t StackId(absl::Span<const uint64_t> frame_ids) {
  uint64_t hash = kOffsetBasis;
  for (uint64_t id : frame_ids) {
    for (int i = 0; i < 8; ++i) hash = Mix(hash, static_cast<unsigned char>(id >> (8 * i)));
  }
  return Mix(hash, 0);
}

}  // namespace profcpu::fleet
