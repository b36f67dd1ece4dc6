#include "fold/profile.h"

#include <optional>
#include <utility>

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
  if (std::optional<uint32_t> found = stacks_->ids.Find(location_ids)) return *found;
  stacks_->stacks.push_back(location_ids);
  const uint32_t id = static_cast<uint32_t>(stacks_->stacks.size() - 1);
  stacks_->ids.Insert(id);
  return id;
}

uint32_t Profile::InternStack(std::vector<uint32_t>&& location_ids) {
  if (std::optional<uint32_t> found = stacks_->ids.Find(location_ids)) return *found;
  stacks_->stacks.push_back(std::move(location_ids));
  const uint32_t id = static_cast<uint32_t>(stacks_->stacks.size() - 1);
  stacks_->ids.Insert(id);
  return id;
}

std::vector<std::vector<uint32_t>> Profile::TakeStacks() {
  stacks_->ids.Clear();
  return std::move(stacks_->stacks);
}

Profile& Profile::operator=(Profile&& other) noexcept {
  if (this == &other) return *this;
  strings_ = std::move(other.strings_);
  string_ids_ = std::move(other.string_ids_);
  locations_ = std::move(other.locations_);
  location_ids_ = std::move(other.location_ids_);
  stacks_.swap(other.stacks_);
  other.stacks_->stacks.clear();
  other.stacks_->ids.Clear();
  samples_ = std::move(other.samples_);
  symbols_ = std::move(other.symbols_);
  modules_ = std::move(other.modules_);
  return *this;
}

Profile& Profile::operator=(const Profile& other) {
  if (this == &other) return *this;
  strings_ = other.strings_;
  string_ids_ = other.string_ids_;
  locations_ = other.locations_;
  location_ids_ = other.location_ids_;
  stacks_ = std::make_unique<StackStore>();
  stacks_->stacks = other.stacks_->stacks;
  for (uint32_t id = 0; id < stacks_->stacks.size(); ++id) stacks_->ids.Insert(id);
  samples_ = other.samples_;
  symbols_ = other.symbols_;
  modules_ = other.modules_;
  return *this;
}

}  // namespace profcpu::fold
