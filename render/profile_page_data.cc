#include "render/profile_page_data.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "base/parallel_sort.h"
#include "fold/location_namer.h"
#include "fold/perf_script_format.h"
#include "fold/profile_filter.h"
#include "render/frame_writer.h"
#include "render/xml_text.h"

namespace profcpu::render {
namespace {

uint64_t Pair(uint32_t high, uint32_t low) { return (uint64_t{high} << 32) | low; }

// BuildNodes' tree in sorted order: runs of nodes, each node under the one
// before it in its run, the run's first under a node of an earlier run.
constexpr uint32_t kNoRun = UINT32_MAX;  // the root's "run"

struct Place {  // a node: its run, its offset in it
  uint32_t run = kNoRun;
  uint32_t offset = 0;
};

struct Run {
  uint32_t first = 0;  // the index of its first node's name
  Place parent;        // of its first node
  uint32_t numbered = 0;  // its first nodes numbered so far
  uint32_t last_segment = 0;  // the last of Segments numbering them
};

// A run's nodes numbered at once: from `offset` on, from `number` on.
struct Segment {
  uint32_t offset = 0;
  uint32_t number = 0;
  uint32_t previous = 0;  // the run's segment before, if offset > 0
};

// A run's nodes [from, to] missing from the numbering.
struct Span {
  uint32_t run = 0;
  uint32_t from = 0;
  uint32_t to = 0;
};

class PageBuilder {
 public:
  PageBuilder(const fold::Profile& profile, const PageDataOptions& options)
      : profile_(profile), options_(options), namer_(profile, options.fold) {
    data_.nodes.push_back({});  // the invisible root
  }

  void AddSample(const fold::Sample& sample) {
    PageSample& out = data_.samples.emplace_back();
    out.time_us = sample.time_ns > options_.start_ns
                      ? (sample.time_ns - options_.start_ns) / 1000 : 0;
    out.node = StackKey(sample.comm, sample.stack);  // a leaf node after Finish()
    out.thread = Thread(sample.pid, sample.tid, sample.comm);
    out.weight = options_.fold.weight_by_period && sample.period != 0 ? sample.period : 1;
    data_.weighted |= out.weight != 1;
    data_.total_weight += out.weight;
    data_.last_time_us = std::max(data_.last_time_us, out.time_us);
  }

  PageData Finish() {
    const std::vector<uint32_t> leaf_of_key = BuildNodes();
    for (PageSample& sample : data_.samples) sample.node = leaf_of_key[sample.node];
    // Samples arrive per CPU buffer, nearly but not quite in time order; the
    // page finds a time range by binary search.
    std::stable_sort(data_.samples.begin(), data_.samples.end(),
                     [](const PageSample& a, const PageSample& b) { return a.time_us < b.time_us; });
    return std::move(data_);
  }

 private:
  // The comm as the flame graph's process root names it.
  const std::string& CommName(uint32_t comm) {
    auto [it, inserted] = comm_names_.try_emplace(comm);
    if (inserted) it->second = fold::SanitizeComm(profile_.string(comm));
    return it->second;
  }

  uint32_t NameId(const std::string& raw, uint8_t flags) {
    auto [it, inserted] = name_ids_.try_emplace(std::make_pair(raw, flags), data_.names.size());
    if (!inserted) return it->second;
    PageName& name = data_.names.emplace_back();
    std::string clean;
    AppendCleanText(raw, &clean);
    name.text = std::string(StripAnnotation(clean));
    name.flags = flags;
    if ((flags & kPageNameKernel) && fold::IsIdleFunction(name.text)) name.flags |= kPageNameIdle;
    // As flamegraph.svg colours them (frame_writer.cc): separators grey, the
    // cool subtree blue by the label, the rest by the annotated name.
    if (clean == "--" || clean == "-") {
      name.color = name.cool = clean == "--" ? Rgb{160, 160, 160} : Rgb{200, 200, 200};
    } else {
      name.color = FrameColor(options_.palette, options_.hash_colors, clean);
      name.cool = FrameColor(Palette::kBlue, options_.hash_colors, name.text);
    }
    return it->second;
  }

  // The index of the distinct (comm, stack) of a sample; a new one's frames
  // (name ids, root first) are appended to key_bytes_ as varints: on deep
  // stacks they are tens of millions of frames, most ids below 16,384.
  uint32_t StackKey(uint32_t comm, uint32_t stack) {
    auto [it, inserted] =
        keys_.try_emplace(Pair(comm, stack), static_cast<uint32_t>(key_starts_.size()));
    if (!inserted) return it->second;
    key_starts_.push_back(key_bytes_.size());
    const std::string& root = CommName(comm);
    const bool java = fold::IsJavaRoot(root);
    AppendFrame(NameId(root, kPageNameProcess));
    const std::vector<uint32_t>& locations = profile_.stack(stack);
    for (auto loc = locations.rbegin(); loc != locations.rend(); ++loc) {
      for (uint32_t name : LocationNames(*loc, java)) AppendFrame(name);
    }
    return it->second;
  }

  void AppendFrame(uint32_t name) {
    while (name >= 0x80) {
      key_bytes_.push_back(static_cast<char>((name & 0x7f) | 0x80));
      name >>= 7;
    }
    key_bytes_.push_back(static_cast<char>(name));
  }

  absl::string_view KeyBytes(uint32_t key) const {
    const size_t end = key + 1 < key_starts_.size() ? key_starts_[key + 1] : key_bytes_.size();
    return absl::string_view(key_bytes_).substr(key_starts_[key], end - key_starts_[key]);
  }

  // The frames two stacks' bytes begin with alike: a varint is never the
  // start of another, so they are the varints ended (a byte below 0x80)
  // before the first byte that differs.
  static uint32_t SharedFrames(absl::string_view a, absl::string_view b) {
    const size_t limit = std::min(a.size(), b.size());
    uint32_t frames = 0;
    for (size_t i = 0; i < limit && a[i] == b[i]; ++i) {
      frames += static_cast<unsigned char>(a[i]) < 0x80;
    }
    return frames;
  }

  // data_.nodes: the call tree of the distinct stacks, numbered as if each
  // stack's missing frames were added in the order the samples first showed
  // the stack (the page's format keeps that order). The tree is built in
  // another order, the stacks sorted by their frames' bytes (stacks with a
  // prefix of frames in common are side by side), where a frame that
  // differs from the previous stack's is always new, so no node is ever
  // looked up; then numbered. On deep, distinct stacks the tree has tens of
  // millions of nodes: it is held as name ids (sized exactly, not grown; 2
  // bytes each on a run of fewer than 65,536 names), the parents given per
  // stack, not per node, and numbered span by span into a second array of
  // name ids. Returns each key's leaf node.
  std::vector<uint32_t> BuildNodes() {
    const uint32_t keys = static_cast<uint32_t>(key_starts_.size());
    key_bytes_.shrink_to_fit();  // held beside the whole tree below
    std::vector<uint32_t> sorted(keys);
    for (uint32_t k = 0; k < keys; ++k) sorted[k] = k;
    // Stacks with the same frames may come in any order: they share a leaf,
    // and the numbering below follows the first-seen order alone.
    base::SortOnThreads(&sorted, [this](uint32_t a, uint32_t b) {
      return KeyBytes(a) < KeyBytes(b);
    }, options_.threads);
    // Each sorted stack's frames shared with the one before it: the rest
    // are new nodes, so the tree's size is known before it is built.
    std::vector<uint32_t> shared(keys, 0);
    size_t node_count = 1;  // the root
    for (uint32_t i = 0; i < keys; ++i) {
      const absl::string_view bytes = KeyBytes(sorted[i]);
      if (i > 0) shared[i] = SharedFrames(KeyBytes(sorted[i - 1]), bytes);
      size_t frames = 0;
      for (char byte : bytes) frames += static_cast<unsigned char>(byte) < 0x80;
      node_count += frames - shared[i];
    }
    // The tree in sorted order, as names: each stack's new frames are a
    // run of nodes, each under the one before, the run's first under a node
    // of an earlier run (or the root). Nodes are named below by run and
    // offset in it.
    const bool wide = data_.names.size() > 0x10000;
    PageNameIds names(wide);
    names.reserve(node_count);
    std::vector<Run> runs;
    runs.reserve(keys);
    std::vector<Place> leaf(keys);
    std::vector<Place> path;  // the previous stack's nodes, by depth
    for (uint32_t i = 0; i < keys; ++i) {
      const absl::string_view bytes = KeyBytes(sorted[i]);
      path.resize(shared[i]);
      uint32_t depth = 0, name = 0;
      int shift = 0;
      for (char byte : bytes) {
        const auto value = static_cast<unsigned char>(byte);
        name |= uint32_t{value & 0x7fu} << shift;
        shift += 7;
        if (value >= 0x80) continue;
        if (depth++ >= shared[i]) {
          if (depth - 1 == shared[i]) {
            Run& run = runs.emplace_back();
            run.first = static_cast<uint32_t>(names.size());
            run.parent = path.empty() ? Place{} : path.back();
          }
          path.push_back({static_cast<uint32_t>(runs.size() - 1),
                          static_cast<uint32_t>(names.size()) - runs.back().first});
          names.push_back(name);
        }
        name = 0;
        shift = 0;
      }
      leaf[sorted[i]] = path.empty() ? Place{} : path.back();
    }
    // The stacks' frames are in the tree now: on deep stacks they are tens
    // of megabytes, not held while the nodes are numbered.
    std::vector<uint32_t>().swap(shared);
    std::vector<uint32_t>().swap(sorted);
    std::string().swap(key_bytes_);
    std::vector<size_t>().swap(key_starts_);
    absl::flat_hash_map<uint64_t, uint32_t>().swap(keys_);
    // Numbered in first-seen order: a stack's nodes not yet numbered are
    // the end of its path; they get the next numbers, outermost first, so
    // in the numbering they are a run too, whose first node's parent is a
    // jump (PageNodes). A run's nodes numbered are always its first ones
    // (a node's parents are numbered before it): the path's missing nodes
    // are whole spans of runs, copied in order, never a node at a time.
    std::vector<Segment> segments;
    // A numbered node's number: its run's segments are linked last first.
    auto number_of = [&runs, &segments](Place place) {
      uint32_t segment = runs[place.run].last_segment;
      while (segments[segment].offset > place.offset) segment = segments[segment].previous;
      return segments[segment].number + (place.offset - segments[segment].offset);
    };
    PageNameIds numbered_names(wide);
    numbered_names.reserve(names.size() + 1);
    numbered_names.push_back(0);  // the root
    std::vector<PageNodes::Jump> jumps;
    std::vector<uint32_t> leaf_numbers(keys, 0);
    std::vector<Span> missing;  // leaf first
    for (uint32_t key = 0; key < keys; ++key) {
      missing.clear();
      Place at = leaf[key];
      uint32_t parent = 0;  // the number of the deepest node numbered
      while (at.run != kNoRun) {
        Run& run = runs[at.run];
        if (at.offset < run.numbered) {
          parent = number_of(at);
          break;
        }
        missing.push_back({at.run, run.numbered, at.offset});
        if (run.numbered > 0) {
          parent = number_of({at.run, run.numbered - 1});
          break;
        }
        at = run.parent;
      }
      if (!missing.empty()) {
        jumps.push_back({static_cast<uint32_t>(numbered_names.size()), parent});
      }
      for (auto span = missing.rbegin(); span != missing.rend(); ++span) {
        Run& run = runs[span->run];
        segments.push_back({span->from, static_cast<uint32_t>(numbered_names.size()),
                            run.last_segment});
        run.last_segment = static_cast<uint32_t>(segments.size() - 1);
        run.numbered = span->to + 1;
        numbered_names.Append(names, run.first + span->from, run.first + span->to + 1);
      }
      if (leaf[key].run != kNoRun) leaf_numbers[key] = number_of(leaf[key]);
    }
    data_.nodes = PageNodes(std::move(numbered_names), std::move(jumps));
    return leaf_numbers;
  }

  // The location's frames as name ids (its flags: kernel, JIT code).
  const std::vector<uint32_t>& LocationNames(uint32_t id, bool java) {
    return namer_.NameIds(id, java, [this, id](const std::string& name) {
      const fold::Location& location = profile_.location(id);
      uint8_t flags = 0;
      if (location.kernel) flags |= kPageNameKernel;
      if (location.code.kind == symbolize::CodeKind::kProcess) flags |= kPageNameJit;
      return NameId(name, flags);
    });
  }

  uint32_t Thread(uint32_t pid, uint32_t tid, uint32_t comm) {
    auto [it, inserted] = threads_.try_emplace(std::make_tuple(pid, tid, comm), 0);
    if (inserted) {
      it->second = static_cast<uint32_t>(data_.threads.size());
      data_.threads.push_back({pid, tid, NameId(CommName(comm), kPageNameProcess)});
    }
    return it->second;
  }

  const fold::Profile& profile_;
  const PageDataOptions& options_;
  fold::LocationNamer namer_;
  PageData data_;
  absl::flat_hash_map<uint32_t, std::string> comm_names_;
  absl::flat_hash_map<std::pair<std::string, uint8_t>, uint32_t> name_ids_;
  // Distinct (comm, stack) pairs in first-seen order, and their frames.
  absl::flat_hash_map<uint64_t, uint32_t> keys_;
  std::vector<size_t> key_starts_;
  std::string key_bytes_;
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> threads_;
};

}  // namespace

void PageNameIds::Widen() {
  wide_names_.assign(narrow_names_.begin(), narrow_names_.end());
  std::vector<uint16_t>().swap(narrow_names_);
  wide_ = true;
}

void PageNameIds::Append(const PageNameIds& from, size_t begin, size_t end) {
  if (!wide_ && from.wide_) {
    for (size_t i = begin; i < end; ++i) push_back(from[i]);
  } else if (wide_ && from.wide_) {
    wide_names_.insert(wide_names_.end(), from.wide_names_.begin() + begin,
                       from.wide_names_.begin() + end);
  } else if (wide_) {
    wide_names_.insert(wide_names_.end(), from.narrow_names_.begin() + begin,
                       from.narrow_names_.begin() + end);
  } else {
    narrow_names_.insert(narrow_names_.end(), from.narrow_names_.begin() + begin,
                         from.narrow_names_.begin() + end);
  }
}

PageNode PageNodes::operator[](size_t i) const {
  PageNode node{i == 0 ? 0 : static_cast<uint32_t>(i - 1), names_[i]};
  auto after = std::upper_bound(jumps_.begin(), jumps_.end(), i,
                                [](size_t index, const Jump& jump) { return index < jump.node; });
  if (after != jumps_.begin() && std::prev(after)->node == i) node.parent = std::prev(after)->parent;
  return node;
}

PageData BuildPageData(const fold::Profile& profile, const PageDataOptions& options) {
  PageBuilder builder(profile, options);
  fold::EventFilter events(profile, options.fold);
  for (const fold::Sample& sample : profile.samples()) {
    if (events.Keeps(sample.event)) builder.AddSample(sample);
  }
  return builder.Finish();
}

}  // namespace profcpu::render
