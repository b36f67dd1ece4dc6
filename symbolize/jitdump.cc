#include "symbolize/jitdump.h"

// The timeline of a jitdump's code regions: indexed by address once read
// (jitdump_reader.cc reads the file) or built from code known otherwise,
// then asked which region was live at a sample's address and time.

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace profcpu::symbolize {
namespace {

// Overlapping definitions remembered per address range: a hostile file of
// nested regions must not make the index quadratic. Real files overlap a
// handful of times where code memory is reused.
constexpr size_t kMaxCoverPerSegment = 64;

}  // namespace

Jitdump Jitdump::FromCode(std::vector<TimedJitCode> code, const JitdumpLimits& limits) {
  std::stable_sort(code.begin(), code.end(), [](const TimedJitCode& a, const TimedJitCode& b) {
    return a.load_ns < b.load_ns;
  });
  Jitdump out;
  for (TimedJitCode& c : code) {
    if (c.size == 0 || c.size > UINT64_MAX - c.start) continue;
    const absl::string_view name = absl::string_view(c.name).substr(0, limits.max_name_length);
    if (out.regions_.size() >= limits.max_regions ||
        out.names_.size() + name.size() > limits.max_name_bytes) {
      out.stats_.limit_hit = true;
      out.stats_.stopped_because = "the region or name limit was reached";
      break;
    }
    Region r;
    r.start = c.start;
    r.end = c.start + c.size;
    r.load_time = c.load_ns;
    r.end_time = c.unload_ns;
    r.name_offset = static_cast<uint32_t>(out.names_.size());
    r.name_length = static_cast<uint32_t>(name.size());
    out.names_.append(name.data(), name.size());
    out.regions_.push_back(r);
    ++out.stats_.code_loads;
  }
  out.Index();
  return out;
}

// Flattens the regions into address segments, each listing the regions that
// cover it in load (file) order, the latest kMaxCoverPerSegment at most.
void Jitdump::Index() {
  struct Event {
    uint64_t at;
    bool start;
    uint32_t region;
  };
  std::vector<Event> events;
  events.reserve(regions_.size() * 2);
  for (uint32_t i = 0; i < regions_.size(); ++i) {
    events.push_back({regions_[i].start, true, i});
    events.push_back({regions_[i].end, false, i});
  }
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.at < b.at; });
  std::set<uint32_t> active;
  size_t i = 0;
  while (i < events.size()) {
    const uint64_t at = events[i].at;
    for (; i < events.size() && events[i].at == at; ++i) {
      if (events[i].start) {
        active.insert(events[i].region);
      } else {
        active.erase(events[i].region);
      }
    }
    Segment segment;
    segment.start = at;
    segment.cover_begin = static_cast<uint32_t>(cover_.size());
    size_t skip = active.size() > kMaxCoverPerSegment ? active.size() - kMaxCoverPerSegment : 0;
    for (uint32_t region : active) {
      if (skip > 0) {
        --skip;
        continue;
      }
      cover_.push_back(region);
    }
    segment.cover_end = static_cast<uint32_t>(cover_.size());
    segments_.push_back(segment);
  }
}

uint32_t Jitdump::Generation(uint64_t address, uint64_t time_ns) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), address,
                             [](uint64_t a, const Segment& s) { return a < s.start; });
  if (it == segments_.begin()) return 0;
  --it;
  uint32_t first_later = 0;
  for (uint32_t k = it->cover_end; k > it->cover_begin; --k) {
    const uint32_t index = cover_[k - 1];
    const Region& r = regions_[index];
    if (stats_.arch_timestamps || (r.load_time <= time_ns && time_ns < r.end_time)) {
      return index + 1;
    }
    if (r.load_time > time_ns && !r.moved_in &&
        (first_later == 0 || r.load_time < regions_[first_later - 1].load_time)) {
      first_later = index + 1;
    }
  }
  return first_later == 0 ? 0 : first_later | kLoggedLater;
}

std::optional<JitdumpMatch> Jitdump::Lookup(uint32_t generation, uint64_t address) const {
  generation &= ~kLoggedLater;
  if (generation == 0 || generation > regions_.size()) return std::nullopt;
  const Region& r = regions_[generation - 1];
  if (address < r.start || address >= r.end) return std::nullopt;
  JitdumpMatch match;
  match.name = absl::string_view(names_).substr(r.name_offset, r.name_length);
  match.offset = address - r.start;
  auto begin = lines_.begin() + r.lines_begin;
  auto end = lines_.begin() + r.lines_end;
  auto line = std::upper_bound(begin, end, address,
                               [](uint64_t a, const LineEntry& e) { return a < e.address; });
  if (line != begin) {
    --line;
    match.line = line->line;
    match.source_file = files_[line->file];
  }
  return match;
}

std::vector<std::string> Jitdump::Warnings(absl::string_view what) const {
  std::vector<std::string> warnings;
  if (!stats_.stopped_because.empty()) {
    warnings.push_back(absl::StrCat(what, ": read stopped after ", stats_.records,
                                    " records (", stats_.stopped_because,
                                    "); later JIT code stays unnamed"));
  }
  if (stats_.arch_timestamps) {
    warnings.push_back(absl::StrCat(
        what, ": timestamps come from an architecture clock, not CLOCK_MONOTONIC; each address "
              "is named by its latest definition whatever the sample's time"));
  }
  return warnings;
}

}  // namespace profcpu::symbolize
