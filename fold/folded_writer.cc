#include "fold/folded_writer.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "fold/frame_name.h"
#include "fold/id_list_index.h"
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

namespace {

// stackcollapse sorts stacks by their joined text, bytewise ("a!b" sorts
// before "a;b"). Over interned frames that is: the first frame that differs
// decides, compared as the name followed by what comes after it in the text
// (';' if more frames follow, the end of the text otherwise). Names never
// hold ';' (the naming rules turn it into ':').
std::string TextFrom(const std::vector<uint32_t>& frames, size_t i,
                     const std::vector<std::string>& names) {
  std::string text;
  for (size_t first = i; i < frames.size(); ++i) {
    absl::StrAppend(&text, i == first ? "" : ";", names[frames[i]]);
  }
  return text;
}

bool JoinedTextLess(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                    const std::vector<std::string>& names,
                    const std::vector<bool>& has_semicolon) {
  const size_t common = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < common && a[i] == b[i]) ++i;
  if (i == common) return a.size() < b.size();  // a prefix sorts first
  if (has_semicolon[a[i]] || has_semicolon[b[i]]) {
    // A comm holding ';' (frame names never do): compare the texts.
    return TextFrom(a, i, names) < TextFrom(b, i, names);
  }
  const absl::string_view x = names[a[i]], y = names[b[i]];
  const size_t bytes = std::min(x.size(), y.size());
  if (bytes > 0) {
    const int order = std::memcmp(x.data(), y.data(), bytes);
    if (order != 0) return order < 0;
  }
  // One name is a prefix of the other (they differ, so not equal): the
  // shorter one is followed by ';' or by the end of its text.
  if (x.size() < y.size()) {
    return i + 1 == a.size() || static_cast<unsigned char>(y[bytes]) > ';';
  }
  return i + 1 != b.size() && static_cast<unsigned char>(x[bytes]) < ';';
}

// A folded stack's frame ids, for IdListIndex.
struct FramesOf {
  absl::Span<const uint32_t> operator()(const FoldedStack& stack) const { return stack.frames; }
};

// With a comm holding ';', different frame lists can join into one text
// ("a;b" + "c" and "a" + "b;c"); stackcollapse merges by text, so merge them.
void MergeAlikeTexts(const FoldedProfile& folded, std::vector<FoldedStack>* stacks) {
  absl::flat_hash_map<std::string, size_t> by_text;
  std::vector<FoldedStack> merged;
  for (FoldedStack& stack : *stacks) {
    auto [it, inserted] = by_text.try_emplace(folded.JoinedText(stack), merged.size());
    if (inserted) {
      merged.push_back(std::move(stack));
    } else {
      merged[it->second].count += stack.count;
    }
  }
  *stacks = std::move(merged);
}

}  // namespace

FoldedProfile FoldCounts(const Profile& profile, const StackCounts& stack_counts,
                         const FoldOptions& options) {
  const auto& counts = stack_counts.weights;
  FoldedProfile folded;
  LocationNamer namer(profile, options);
  auto intern = [&folded](const std::string& name) { return folded.InternName(name); };
  // The root frame per (comm, pid, tid), and whether it is a Java root.
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, std::pair<uint32_t, bool>> roots;
  absl::flat_hash_map<uint32_t, std::string> comms;
  std::string root_name;
  auto root_of = [&](const StackKey& key) -> std::pair<uint32_t, bool> {
    auto [it, inserted] = roots.try_emplace(std::make_tuple(key.comm, key.pid, key.tid));
    if (inserted) {
      auto [comm, new_comm] = comms.try_emplace(key.comm);
      if (new_comm) comm->second = SanitizeComm(profile.string(key.comm));
      // As printed in the perf script header ("%5d/%-5d").
      root_name.clear();
      AppendRootName(comm->second, absl::StrCat(static_cast<int32_t>(key.pid)),
                     absl::StrCat(static_cast<int32_t>(key.tid)), options.include_pid,
                     options.include_tid, &root_name);
      it->second = {folded.InternName(root_name), IsJavaRoot(root_name)};
    }
    return it->second;
  };

  // Different stacks may name alike: merge by frames.
  std::vector<FoldedStack> stacks;
  stacks.reserve(counts.size());
  IdListIndex<FoldedStack, FramesOf> index(&stacks, counts.size());
  std::vector<uint32_t> frames;
  for (const auto& [key, count] : counts) {
    const auto [root, java] = root_of(key);
    frames.clear();
    frames.push_back(root);
    const std::vector<uint32_t>& locations = profile.stack(key.stack);
    for (auto it = locations.rbegin(); it != locations.rend(); ++it) {
      const std::vector<uint32_t>& ids = namer.NameIds(*it, java, intern);
      frames.insert(frames.end(), ids.begin(), ids.end());
    }
    if (std::optional<uint32_t> found = index.Find(frames)) {
      stacks[*found].count += count;
    } else {
      FoldedStack& stack = stacks.emplace_back();
      stack.frames = frames;
      stack.count = count;
      index.Insert(static_cast<uint32_t>(stacks.size() - 1));
    }
  }

  const std::vector<std::string>& names = folded.names();
  std::vector<bool> has_semicolon(names.size());
  bool any_semicolon = false;
  for (size_t i = 0; i < names.size(); ++i) {
    has_semicolon[i] = absl::StrContains(names[i], ';');
    any_semicolon = any_semicolon || has_semicolon[i];
  }
  if (any_semicolon) MergeAlikeTexts(folded, &stacks);
  std::sort(stacks.begin(), stacks.end(), [&](const FoldedStack& a, const FoldedStack& b) {
    return JoinedTextLess(a.frames, b.frames, names, has_semicolon);
  });
  folded.stacks = std::move(stacks);
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
  const std::vector<std::string>& names = folded.names();
  for (const FoldedStack& stack : folded.stacks) {
    std::string* buffer = out->buffer();
    for (size_t i = 0; i < stack.frames.size(); ++i) {
      if (i > 0) buffer->push_back(';');
      buffer->append(names[stack.frames[i]]);
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

absl::Status WriteFoldedFile(const FoldedProfile& folded, const std::string& path) {
  return WriteFileThrough(path, [&](OutputBuffer* out) { return WriteFolded(folded, out); });
}

}  // namespace profcpu::fold
