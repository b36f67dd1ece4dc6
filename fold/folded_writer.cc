#include "fold/folded_writer.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "fold/frame_name.h"
#include "fold/location_namer.h"
#include "fold/perf_script_format.h"
#include "fold/perf_script_reader.h"

namespace profcpu::fold {
EventFilter::EventFilter(const Profile& profile, const FoldOptions& options)
    : profile_(profile) {
  if (!options.event_filter.empty()) {
    name_ = options.event_filter;
  } else if (!profile.samples().empty()) {
    name_ = SanitizeEvent(profile.string(profile.samples().front().event));
  }
}

bool EventFilter::Keeps(uint32_t event) {
  auto [it, inserted] = keeps_.try_emplace(event, false);
  if (inserted) it->second = SanitizeEvent(profile_.string(event)) == name_;
  return it->second;
}

StackCounts CountStacks(const Profile& profile, const FoldOptions& options) {
  EventFilter filter(profile, options);
  StackCounts counts;
  const bool pid = options.include_pid || options.include_tid;
  for (const Sample& sample : profile.samples()) {
    if (!filter.Keeps(sample.event)) continue;
    StackKey key{sample.comm, pid ? sample.pid : 0, options.include_tid ? sample.tid : 0,
                 sample.stack};
    uint64_t weight = options.weight_by_period && sample.period != 0 ? sample.period : 1;
    counts.weights[key] += weight;
  }
  return counts;
}

FoldedProfile FoldProfile(const Profile& profile, const FoldOptions& options) {
  return FoldCounts(profile, CountStacks(profile, options), options);
}

FoldedProfile FoldCounts(const Profile& profile, const StackCounts& stack_counts,
                         const FoldOptions& options) {
  const auto& counts = stack_counts.weights;
  // Different stacks may name alike, so merge by text.
  LocationNamer namer(profile, options);
  absl::flat_hash_map<uint32_t, std::string> comms;
  std::vector<std::string> texts;
  std::vector<FoldedStack> stacks;
  absl::flat_hash_map<std::string, size_t> index;
  std::string text;
  for (const auto& [key, count] : counts) {
    auto [comm, inserted] = comms.try_emplace(key.comm);
    if (inserted) comm->second = SanitizeComm(profile.string(key.comm));
    // As printed in the perf script header ("%5d/%-5d").
    std::string pid_text = absl::StrCat(static_cast<int32_t>(key.pid));
    std::string tid_text = absl::StrCat(static_cast<int32_t>(key.tid));
    FoldedStack stack;
    stack.frames.emplace_back();
    AppendRootName(comm->second, pid_text, tid_text, options.include_pid, options.include_tid,
                   &stack.frames.back());
    const bool java = IsJavaRoot(stack.frames.back());
    text = stack.frames.back();
    const std::vector<uint32_t>& locations = profile.stack(key.stack);
    for (auto it = locations.rbegin(); it != locations.rend(); ++it) {
      for (const std::string& name : namer.Names(*it, java)) {
        stack.frames.push_back(name);
        absl::StrAppend(&text, ";", name);
      }
    }
    auto [slot, added] = index.try_emplace(text, stacks.size());
    if (added) {
      stack.count = count;
      stacks.push_back(std::move(stack));
      texts.push_back(text);
    } else {
      stacks[slot->second].count += count;
    }
  }

  // stackcollapse sorts by the joined text, bytewise (not frame by frame:
  // "a!b" sorts before "a;b").
  std::vector<size_t> order(stacks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&texts](size_t a, size_t b) {
    return absl::string_view(texts[a]) < absl::string_view(texts[b]);
  });
  FoldedProfile folded;
  folded.stacks.reserve(stacks.size());
  for (size_t i : order) folded.stacks.push_back(std::move(stacks[i]));
  return folded;
}

namespace {

// Appends `count` units of `unit` (10^-decimals) as Perl prints the number:
// "3", "1.5", "0.25".
void AppendCount(uint64_t count, int decimals, std::string* out) {
  if (decimals == 0) {
    absl::StrAppend(out, count);
    return;
  }
  uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  absl::StrAppend(out, count / scale);
  std::string fraction = absl::StrCat(count % scale);
  if (fraction == "0") return;
  fraction.insert(0, static_cast<size_t>(decimals) - fraction.size(), '0');
  while (fraction.back() == '0') fraction.pop_back();
  absl::StrAppend(out, ".", fraction);
}

}  // namespace

absl::Status WriteFolded(const FoldedProfile& folded, OutputBuffer* out) {
  int decimals = 0;
  for (double unit = folded.count_unit; unit < 0.99 && decimals < 18; unit *= 10) ++decimals;
  for (const FoldedStack& stack : folded.stacks) {
    std::string* buffer = out->buffer();
    for (size_t i = 0; i < stack.frames.size(); ++i) {
      if (i > 0) buffer->push_back(';');
      buffer->append(stack.frames[i]);
    }
    if (folded.differential) {
      buffer->push_back(' ');
      AppendCount(stack.baseline, decimals, buffer);
    }
    buffer->push_back(' ');
    AppendCount(stack.count, decimals, buffer);
    buffer->push_back('\n');
    out->MaybeFlush();
  }
  return out->Finish();
}

std::string FormatFolded(const FoldedProfile& folded) {
  std::string text;
  OutputBuffer out(&text);
  WriteFolded(folded, &out).IgnoreError();  // a string sink cannot fail
  return text;
}

}  // namespace profcpu::fold
