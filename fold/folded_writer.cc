#include "fold/folded_writer.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/timed_tasks.h"
#include "fold/folded_writer_order.h"
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

// A folded stack's frame ids, for IdListIndex.
struct FramesOf {
  absl::Span<const uint32_t> operator()(const FoldedStack& stack) const { return stack.frames; }
};

// How many stacks one task of FoldCounts names, at least.
constexpr size_t kEntriesPerNameTask = 4096;

// Merges stacks of the same frames into the first one met of them.
void MergeAlikeFrames(std::vector<FoldedStack>* stacks) {
  std::vector<FoldedStack> merged;
  merged.reserve(stacks->size());
  IdListIndex<FoldedStack, FramesOf> index(&merged, stacks->size());
  for (FoldedStack& stack : *stacks) {
    if (std::optional<uint32_t> found = index.Find(stack.frames)) {
      merged[*found].count += stack.count;
    } else {
      merged.push_back(std::move(stack));
      index.Insert(static_cast<uint32_t>(merged.size() - 1));
    }
  }
  *stacks = std::move(merged);
}

// Merges sorted stacks of the same frames, side by side.
void MergeNeighbours(std::vector<FoldedStack>* stacks) {
  size_t kept = 0;
  for (size_t i = 0; i < stacks->size(); ++i) {
    FoldedStack& stack = (*stacks)[i];
    if (kept > 0 && (*stacks)[kept - 1].frames == stack.frames) {
      (*stacks)[kept - 1].count += stack.count;
    } else if (kept++ != i) {
      (*stacks)[kept - 1] = std::move(stack);
    }
  }
  stacks->resize(kept);
}

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
                         const FoldOptions& options, base::ParallelStage* stage) {
  base::ParallelStage split;
  const double start_wall = base::MonotonicSeconds();
  const double start_cpu = base::ThreadCpuSeconds();
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

  // First, in the counts' order as ever, every name is interned, so the
  // name table and its ids come out the same; only then are the stacks'
  // frame lists built, side by side (each location's ids are known by now).
  struct Entry {
    uint32_t stack;
    uint32_t root;
    bool java;
    uint64_t count;
  };
  std::vector<Entry> entries;
  entries.reserve(counts.size());
  // Whether a location was named, per Java root or not: millions of frames
  // are walked here, a few hundred locations named.
  std::vector<uint8_t> named(2 * profile.location_count());
  for (const auto& [key, count] : counts) {
    const auto [root, java] = root_of(key);
    const std::vector<uint32_t>& locations = profile.stack(key.stack);
    for (auto it = locations.rbegin(); it != locations.rend(); ++it) {
      uint8_t& done = named[2 * size_t{*it} + (java ? 1 : 0)];
      if (!done) {
        done = 1;
        namer.NameIds(*it, java, intern);
      }
    }
    entries.push_back({key.stack, root, java, count});
  }
  std::vector<FoldedStack> stacks(entries.size());
  const size_t threads = static_cast<size_t>(std::max(options.threads, 1));
  const size_t name_tasks = std::min(entries.size() / kEntriesPerNameTask + 1, 4 * threads);
  // NameIds only reads by now (every location was named above): safe side by side.
  double own_task_cpu = base::RunTimedTasks(name_tasks, threads, [&](size_t task) {
    const size_t end = entries.size() * (task + 1) / name_tasks;
    for (size_t i = entries.size() * task / name_tasks; i < end; ++i) {
      const Entry& entry = entries[i];
      const std::vector<uint32_t>& locations = profile.stack(entry.stack);
      size_t size = 1;
      for (uint32_t location : locations) size += namer.NameIds(location, entry.java, intern).size();
      std::vector<uint32_t>& frames = stacks[i].frames;
      frames.reserve(size);
      frames.push_back(entry.root);
      for (auto it = locations.rbegin(); it != locations.rend(); ++it) {
        const std::vector<uint32_t>& ids = namer.NameIds(*it, entry.java, intern);
        frames.insert(frames.end(), ids.begin(), ids.end());
      }
      stacks[i].count = entry.count;
    }
  }, &split);
  entries = {};

  // Different stacks may name alike: merge them.
  const std::vector<std::string>& names = folded.names();
  if (std::any_of(names.begin(), names.end(),
                  [](const std::string& name) { return absl::StrContains(name, ';'); })) {
    // With a comm holding ';', different frame lists can join into one
    // text: merged by text, the first one met kept (stackcollapse merges by
    // text), which needs them in the counts' order.
    MergeAlikeFrames(&stacks);
    MergeAlikeTexts(folded, &stacks);
    own_task_cpu += SortByJoinedText(names, &stacks, options.threads, &split);
  } else {
    // Frame lists that join alike are alike: the sort puts them side by side.
    own_task_cpu += SortByJoinedText(names, &stacks, options.threads, &split);
    MergeNeighbours(&stacks);
  }
  if (stage != nullptr) {
    // Interning the names and merging the stacks did not split; the rest did.
    stage->wall += base::MonotonicSeconds() - start_wall;
    stage->serial += std::max(0.0, base::ThreadCpuSeconds() - start_cpu - own_task_cpu);
    stage->tasks += split.tasks;
    stage->threads = std::max(stage->threads, split.threads);
    stage->longest_task = std::max(stage->longest_task, split.longest_task);
    stage->task_cpu += split.task_cpu;
  }
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

// How many stacks one task formats: deep stacks print about a kilobyte
// each, so a round of 16 tasks holds a few megabytes.
constexpr size_t kStacksPerTask = 512;

void AppendStack(const FoldedProfile& folded, const FoldedStack& stack, int decimals,
                 std::string* buffer) {
  const std::vector<std::string>& names = folded.names();
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
}

// Rounds of `threads` tasks, each formatting kStacksPerTask stacks into a
// text of its own, side by side; then the round's texts go to `out` in
// order (whose own thread writes them to the file meanwhile). Adds the
// tasks to `stage`; returns this thread's CPU seconds in them.
double WriteFoldedOnThreads(const FoldedProfile& folded, int decimals, size_t threads,
                            OutputBuffer* out, base::ParallelStage* stage) {
  const std::vector<FoldedStack>& stacks = folded.stacks;
  const size_t tasks = (stacks.size() + kStacksPerTask - 1) / kStacksPerTask;
  std::vector<std::string> texts(threads);
  double own_cpu = 0;
  for (size_t first = 0; first < tasks; first += threads) {
    const size_t round = std::min(threads, tasks - first);
    auto format = [&](size_t slot) {
      const size_t begin = (first + slot) * kStacksPerTask;
      const size_t end = std::min(begin + kStacksPerTask, stacks.size());
      texts[slot].clear();
      for (size_t i = begin; i < end; ++i) AppendStack(folded, stacks[i], decimals, &texts[slot]);
    };
    own_cpu += base::RunTimedTasks(round, threads, format, stage);
    for (size_t slot = 0; slot < round; ++slot) out->Append(texts[slot]);
  }
  return own_cpu;
}

}  // namespace

absl::Status WriteFolded(const FoldedProfile& folded, OutputBuffer* out, int threads,
                         base::ParallelStage* stage) {
  int decimals = 0;
  for (double unit = folded.count_unit; unit < 0.99 && decimals < 18; unit *= 10) ++decimals;
  if (threads <= 1 || folded.stacks.size() <= kStacksPerTask) {
    for (const FoldedStack& stack : folded.stacks) {
      AppendStack(folded, stack, decimals, out->buffer());
      out->MaybeFlush();
    }
    return out->Finish();
  }
  base::ParallelStage ignored;
  if (stage == nullptr) stage = &ignored;
  const double start_wall = base::MonotonicSeconds();
  const double start_cpu = base::ThreadCpuSeconds();
  const double own_task_cpu =
      WriteFoldedOnThreads(folded, decimals, static_cast<size_t>(threads), out, stage);
  absl::Status status = out->Finish();
  stage->wall += base::MonotonicSeconds() - start_wall;
  // Handing the texts on (and waiting for the file's writes) did not split.
  stage->serial += std::max(0.0, base::ThreadCpuSeconds() - start_cpu - own_task_cpu);
  return status;
}

std::string FormatFolded(const FoldedProfile& folded, int threads) {
  std::string text;
  OutputBuffer out(&text);
  WriteFolded(folded, &out, threads).IgnoreError();  // a string sink cannot fail
  return text;
}

absl::Status WriteFoldedFile(const FoldedProfile& folded, const std::string& path, int threads,
                             base::ParallelStage* stage) {
  return WriteFileThrough(
      path, [&](OutputBuffer* out) { return WriteFolded(folded, out, threads, stage); });
}

}  // namespace profcpu::fold
