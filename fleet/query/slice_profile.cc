#include "fleet/query/slice_profile.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "fold/frame_name.h"

namespace profcpu::fleet {
namespace {

class ProfileBuilder {
 public:
  explicit ProfileBuilder(SliceProfileStats* stats) : stats_(stats) {
    event_ = profile_.InternString("cpu-clock");
  }

  void AddStack(const MergedStack& stack, const StackNames& names) {
    std::vector<uint32_t> locations;  // leaf first, as the Profile keeps them
    std::string root;
    if (stack.id == 0) {
      root = kOtherFrame;  // alone: its frames are those of many stacks
    } else {
      root = stack.several_comms ? kSeveralComms : stack.comm;
      if (root.empty()) root = "[unknown]";
      const std::vector<uint64_t>* frames = names.Frames(stack.id);
      if (frames == nullptr) {
        ++stats_->stacks_without_names;
        locations.push_back(NamedLocation(kMissingStack, ""));
      } else {
        for (auto it = frames->rbegin(); it != frames->rend(); ++it) {
          locations.push_back(FrameLocation(*it, names));
        }
      }
    }
    fold::Sample sample;
    sample.comm = profile_.InternString(root);
    sample.event = event_;
    sample.stack = profile_.InternStack(locations);
    for (const auto& [bucket, count] : stack.buckets) {
      sample.time_ns = static_cast<uint64_t>(bucket) * 1000000000;
      sample.period = count;
      profile_.AddSample(sample);
    }
  }

  fold::Profile Finish() && { return std::move(profile_); }

 private:
  uint32_t FrameLocation(uint64_t frame_id, const StackNames& names) {
    auto [it, inserted] = frame_locations_.try_emplace(frame_id, 0);
    if (!inserted) return it->second;
    const FrameName* frame = names.Frame(frame_id);
    if (frame == nullptr) {
      ++stats_->frames_without_names;
      it->second = NamedLocation(fold::kUnknownFrame, "[unknown]");
    } else {
      it->second = NamedLocation(frame->name, frame->module);
    }
    return it->second;
  }

  // One location per distinct (name, module).
  uint32_t NamedLocation(absl::string_view name, absl::string_view module) {
    std::string key = absl::StrCat(name, absl::string_view("\0", 1), module);
    auto [it, inserted] = named_.try_emplace(std::move(key), 0);
    if (!inserted) return it->second;
    fold::Location location;
    location.code = {symbolize::CodeKind::kImported, 0, next_code_++};
    symbolize::Symbolization symbolization;
    symbolization.module = std::string(module);
    location.kernel = fold::IsKernelModule(module);
    if (!name.empty() && name != fold::kUnknownFrame) {
      symbolize::Frame frame;
      frame.function = std::string(name);
      symbolization.frames.push_back(std::move(frame));
    }
    profile_.mutable_symbols().Insert(location.code, std::move(symbolization));
    it->second = profile_.InternLocation(location);
    return it->second;
  }

  SliceProfileStats* stats_;
  fold::Profile profile_;
  uint32_t event_ = 0;
  uint64_t next_code_ = 0;
  absl::flat_hash_map<uint64_t, uint32_t> frame_locations_;
  absl::flat_hash_map<std::string, uint32_t> named_;
};

}  // namespace

fold::Profile BuildSliceProfile(const std::vector<const MergedSlice*>& slices,
                                const StackNames& names, SliceProfileStats* stats) {
  ProfileBuilder builder(stats);
  for (const MergedSlice* slice : slices) {
    for (const MergedStack& stack : slice->stacks) builder.AddStack(stack, names);
    if (slice->other.count > 0) builder.AddStack(slice->other, names);
  }
  return std::move(builder).Finish();
}

}  // namespace profcpu::fleet
