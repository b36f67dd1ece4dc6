#include "render/profile_page_data.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fold/location_namer.h"
#include "fold/perf_script_format.h"
#include "fold/profile_filter.h"
#include "render/frame_writer.h"
#include "render/xml_text.h"

namespace profcpu::render {
namespace {

uint64_t Pair(uint32_t high, uint32_t low) { return (uint64_t{high} << 32) | low; }

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
    out.node = LeafNode(sample.comm, sample.stack);
    out.thread = Thread(sample.pid, sample.tid, sample.comm);
    out.weight = options_.fold.weight_by_period && sample.period != 0 ? sample.period : 1;
    data_.weighted |= out.weight != 1;
    data_.total_weight += out.weight;
    data_.last_time_us = std::max(data_.last_time_us, out.time_us);
  }

  PageData Finish() {
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

  uint32_t Child(uint32_t parent, uint32_t name) {
    auto [it, inserted] = children_.try_emplace(Pair(parent, name), data_.nodes.size());
    if (inserted) data_.nodes.push_back({parent, name});
    return it->second;
  }

  uint32_t LeafNode(uint32_t comm, uint32_t stack) {
    auto [it, inserted] = leaves_.try_emplace(Pair(comm, stack), 0);
    if (!inserted) return it->second;
    const std::string& root = CommName(comm);
    const bool java = fold::IsJavaRoot(root);
    uint32_t node = Child(0, NameId(root, kPageNameProcess));
    const std::vector<uint32_t>& locations = profile_.stack(stack);
    for (auto loc = locations.rbegin(); loc != locations.rend(); ++loc) {
      for (uint32_t name : LocationNames(*loc, java)) node = Child(node, name);
    }
    it->second = node;
    return node;
  }

  // The location's frames as name ids, worked out once per location.
  const std::vector<uint32_t>& LocationNames(uint32_t id, bool java) {
    std::vector<std::vector<uint32_t>>& cache = location_names_[java];
    if (cache.empty()) {
      cache.resize(profile_.location_count());
      location_named_[java].assign(profile_.location_count(), false);
    }
    if (location_named_[java][id]) return cache[id];
    location_named_[java][id] = true;
    const fold::Location& location = profile_.location(id);
    uint8_t flags = 0;
    if (location.kernel) flags |= kPageNameKernel;
    if (location.code.kind == symbolize::CodeKind::kProcess) flags |= kPageNameJit;
    for (const std::string& name : namer_.Names(id, java)) cache[id].push_back(NameId(name, flags));
    return cache[id];
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
  std::vector<std::vector<uint32_t>> location_names_[2];  // by Java-ness of the root
  std::vector<bool> location_named_[2];
  absl::flat_hash_map<uint64_t, uint32_t> children_;
  absl::flat_hash_map<uint64_t, uint32_t> leaves_;
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> threads_;
};

}  // namespace

PageData BuildPageData(const fold::Profile& profile, const PageDataOptions& options) {
  PageBuilder builder(profile, options);
  fold::EventFilter events(profile, options.fold);
  for (const fold::Sample& sample : profile.samples()) {
    if (events.Keeps(sample.event)) builder.AddSample(sample);
  }
  return builder.Finish();
}

}  // namespace profcpu::render
