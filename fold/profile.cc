#include "fold/profile.h"

namespace profcpu::fold {

uint32_t Profile::InternString(absl::string_view s) {
  auto [it, inserted] = string_ids_.try_emplace(s, static_cast<uint32_t>(strings_.size()));
  if (inserted) strings_.emplace_back(s);
  return it->second;
}

uint32_t Profile::InternLocation(const Location& location) {
  auto key = std::make_tuple(location.code, location.address, location.offset_adjust,
                             location.kernel);
  auto [it, inserted] = location_ids_.try_emplace(key, static_cast<uint32_t>(locations_.size()));
  if (inserted) locations_.push_back(location);
  return it->second;
}

uint32_t Profile::InternStack(const std::vector<uint32_t>& location_ids) {
  auto [it, inserted] = stack_ids_.try_emplace(location_ids, static_cast<uint32_t>(stacks_.size()));
  if (inserted) stacks_.push_back(location_ids);
  return it->second;
}

}  // namespace profcpu::fold
