#include "symbolize/perf_map.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/status_macros.h"
#include "symbolize/interval_sweep.h"
#include "symbolize/parse_hex.h"

namespace profcpu::symbolize {
namespace {

constexpr size_t kChunkSize = 64 * 1024;
constexpr uint64_t kMaxBytesCap = UINT32_MAX;      // names_ offsets are 32-bit
constexpr size_t kMaxEntriesCap = UINT32_MAX - 1;  // UINT32_MAX marks "no entry"

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Splits off the next blank-separated field of `line`; false if none.
bool NextField(absl::string_view* line, absl::string_view* field) {
  size_t begin = 0;
  while (begin < line->size() && IsBlank((*line)[begin])) ++begin;
  size_t end = begin;
  while (end < line->size() && !IsBlank((*line)[end])) ++end;
  if (begin == end) return false;
  *field = line->substr(begin, end - begin);
  line->remove_prefix(end);
  return true;
}

}  // namespace

// Turns bytes into entries, line by line, whatever the chunk boundaries.
class PerfMap::Builder {
 public:
  Builder(const PerfMapLimits& limits, PerfMap* map)
      : max_entries_(std::min(limits.max_entries, kMaxEntriesCap)),
        max_line_(limits.max_line),
        map_(map) {}

  // `position` is where in the file the bytes fed next begin.
  void set_position(uint64_t position) { position_ = position; }

  // Returns false once the entry cap stops the parse.
  bool Feed(absl::string_view bytes) {
    while (!bytes.empty()) {
      size_t newline = bytes.find('\n');
      absl::string_view piece = bytes.substr(0, newline);
      const size_t taken = newline == absl::string_view::npos ? bytes.size() : newline + 1;
      bytes.remove_prefix(taken);
      position_ += taken;
      if (!skipping_) {
        if (partial_.size() + piece.size() > max_line_) {
          // Too long to be a symbol: drop it without buffering the rest.
          ++map_->stats_.lines;
          ++map_->stats_.malformed;
          partial_.clear();
          skipping_ = true;
        } else {
          partial_.append(piece.data(), piece.size());
        }
      }
      if (newline == absl::string_view::npos) break;  // line continues in the next chunk
      if (!skipping_ && !Line(partial_)) return false;
      partial_.clear();
      skipping_ = false;
      // Every complete line read: where a later read of the same file
      // (PerfMap::Continue) picks up.
      Checkpoint& at = map_->checkpoint_;
      at.bytes = position_;
      at.entries = map_->entries_.size();
      at.names = map_->names_.size();
      at.stats = map_->stats_;
    }
    return true;
  }

  // The last line may lack its newline.
  void Finish() {
    if (!skipping_) Line(partial_);
    partial_.clear();
  }

 private:
  bool Line(absl::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return true;
    PerfMapStats& stats = map_->stats_;
    ++stats.lines;
    absl::string_view start_text, size_text;
    uint64_t start = 0, size = 0;
    if (!NextField(&line, &start_text) || !NextField(&line, &size_text) ||
        !ParseHex(start_text, &start) || !ParseHex(size_text, &size) || size > UINT64_MAX - start) {
      ++stats.malformed;
      return true;
    }
    // NAME is everything after the blanks that follow SIZE, spaces included.
    while (!line.empty() && IsBlank(line.front())) line.remove_prefix(1);
    if (line.empty()) {
      ++stats.malformed;
      return true;
    }
    if (size == 0) {
      ++stats.empty_ranges;
      return true;
    }
    if (map_->entries_.size() >= max_entries_) {
      stats.truncated_entries = true;
      return false;
    }
    map_->entries_.push_back({start, start + size, static_cast<uint32_t>(map_->names_.size()),
                              static_cast<uint32_t>(line.size())});
    map_->names_.append(line.data(), line.size());
    ++stats.entries;
    return true;
  }

  const size_t max_entries_;
  const size_t max_line_;
  PerfMap* map_;
  std::string partial_;
  bool skipping_ = false;
  uint64_t position_ = 0;
};

PerfMap PerfMap::Parse(absl::string_view text, const PerfMapLimits& limits) {
  PerfMap map;
  uint64_t max_bytes = std::min(limits.max_bytes, kMaxBytesCap);
  if (text.size() > max_bytes) {
    text = text.substr(0, max_bytes);
    // The cut line is incomplete: drop it rather than parse half a name.
    size_t last_newline = text.rfind('\n');
    text = last_newline == absl::string_view::npos ? absl::string_view()
                                                   : text.substr(0, last_newline + 1);
    map.stats_.truncated_bytes = true;
  }
  map.stats_.bytes = text.size();
  Builder builder(limits, &map);
  if (builder.Feed(text)) builder.Finish();
  map.Flatten();
  return map;
}

absl::StatusOr<PerfMap> PerfMap::Read(int fd, absl::string_view what, const PerfMapLimits& limits) {
  PerfMap map;
  PROFCPU_RETURN_IF_ERROR(map.ReadFrom(fd, what, limits));
  map.Flatten();
  return map;
}

absl::Status PerfMap::Continue(int fd, absl::string_view what, const PerfMapLimits& limits) {
  if (capped_) return absl::OkStatus();
  // Undo a last line read without its newline: it is read again, whole.
  const bool undone = entries_.size() > checkpoint_.entries;
  const Checkpoint at = checkpoint_;
  entries_.resize(at.entries);
  names_.resize(at.names);
  stats_ = at.stats;
  stats_.bytes = at.bytes;
  PROFCPU_RETURN_IF_ERROR(ReadFrom(fd, what, limits));
  if (undone) {
    segments_.clear();  // they may name the entry undone
    Flatten();
  } else {
    FlattenAppended(at.entries);
  }
  return absl::OkStatus();
}

absl::Status PerfMap::ReadFrom(int fd, absl::string_view what, const PerfMapLimits& limits) {
  const uint64_t max_bytes = std::min(limits.max_bytes, kMaxBytesCap);
  Builder builder(limits, this);
  uint64_t total = checkpoint_.bytes;
  builder.set_position(total);
  std::string buffer(kChunkSize, '\0');
  bool complete = true;
  while (true) {
    // Once at the cap, read one byte more only to learn whether there is more.
    size_t want = total < max_bytes
                      ? static_cast<size_t>(std::min<uint64_t>(buffer.size(), max_bytes - total))
                      : 1;
    ssize_t n = ::read(fd, buffer.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return base::ErrnoStatus(errno, absl::StrCat("read ", what));
    }
    if (n == 0) break;
    if (total >= max_bytes) {
      stats_.truncated_bytes = true;
      complete = false;
      break;
    }
    total += static_cast<uint64_t>(n);
    stats_.bytes = total;
    if (!builder.Feed(absl::string_view(buffer.data(), static_cast<size_t>(n)))) {
      complete = false;
      break;
    }
  }
  // A line cut by the byte cap is incomplete; a last line without a newline
  // at the real end of the file is not.
  if (complete) builder.Finish();
  capped_ = !complete;
  return absl::OkStatus();
}

// Builds segments_ with one sweep over every range boundary: at each boundary
// the covering entry with the highest index (the latest line) wins. Costs
// O(n log n) time and O(n) memory however the ranges overlap.
void PerfMap::Flatten() {
  SweepIntervals(
      entries_.size(), [this](uint32_t i) { return entries_[i].start; },
      [this](uint32_t i) { return entries_[i].end; },
      [](uint32_t a, uint32_t b) { return a > b; },  // the later line wins
      [this](uint64_t point, uint32_t winner) {
        segments_.push_back({point, winner == kNoInterval ? kNoEntry : winner});
      });
}

void PerfMap::FlattenAppended(size_t first) {
  if (first == 0 || segments_.empty()) {
    segments_.clear();
    Flatten();
    return;
  }
  if (first >= entries_.size()) return;
  std::vector<Segment> top;
  SweepIntervals(
      entries_.size() - first, [&](uint32_t i) { return entries_[first + i].start; },
      [&](uint32_t i) { return entries_[first + i].end; },
      [](uint32_t a, uint32_t b) { return a > b; },
      [&](uint64_t point, uint32_t winner) {
        top.push_back({point, winner == kNoInterval ? kNoEntry
                                                     : static_cast<uint32_t>(first + winner)});
      });
  // Two step functions (a segment holds until the next one starts; nothing
  // before the first): the new lines win wherever they name anything.
  std::vector<Segment> merged;
  merged.reserve(segments_.size() + top.size());
  size_t i = 0, j = 0;
  uint32_t below = kNoEntry, above = kNoEntry;
  while (i < segments_.size() || j < top.size()) {
    uint64_t point = UINT64_MAX;
    if (i < segments_.size()) point = segments_[i].start;
    if (j < top.size()) point = std::min(point, top[j].start);
    while (i < segments_.size() && segments_[i].start == point) below = segments_[i++].entry;
    while (j < top.size() && top[j].start == point) above = top[j++].entry;
    const uint32_t entry = above != kNoEntry ? above : below;
    if (merged.empty() || merged.back().entry != entry) merged.push_back({point, entry});
  }
  segments_ = std::move(merged);
}

std::optional<PerfMapMatch> PerfMap::Lookup(uint64_t address) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), address,
                             [](uint64_t a, const Segment& s) { return a < s.start; });
  if (it == segments_.begin()) return std::nullopt;
  --it;
  if (it->entry == kNoEntry) return std::nullopt;
  const Entry& e = entries_[it->entry];
  return PerfMapMatch{absl::string_view(names_).substr(e.name_offset, e.name_length),
                      address - e.start};
}

std::vector<std::string> PerfMap::Warnings(absl::string_view what) const {
  std::vector<std::string> warnings;
  if (stats_.malformed > 0) {
    warnings.push_back(absl::StrCat(what, ": skipped ", stats_.malformed, " malformed line(s) of ",
                                    stats_.lines, " (expected \"START SIZE NAME\")"));
  }
  if (stats_.truncated_bytes) {
    warnings.push_back(absl::StrCat(what, ": read only the first ", stats_.bytes,
                                    " bytes (size limit reached); later JIT symbols are "
                                    "missing"));
  }
  if (stats_.truncated_entries) {
    warnings.push_back(absl::StrCat(what, ": kept only the first ", stats_.entries,
                                    " entries (entry limit reached); later JIT symbols are "
                                    "missing"));
  }
  return warnings;
}

}  // namespace profcpu::symbolize
