// Flattening possibly overlapping address ranges into non-overlapping
// segments, each owned by the range that wins where several cover it (a
// perf map's latest line, DWARF's deepest inlined call). One sweep over the
// sorted boundaries with a heap whose ended ranges leave lazily: O(n log n)
// time and O(n) memory however the ranges nest or overlap.
#ifndef PROFCPU_SYMBOLIZE_INTERVAL_SWEEP_H_
#define PROFCPU_SYMBOLIZE_INTERVAL_SWEEP_H_

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <queue>
#include <vector>

namespace profcpu::symbolize {

inline constexpr uint32_t kNoInterval = UINT32_MAX;

// For ranges 0..count-1 given by start(i) and end(i) (exclusive), calls
// emit(point, winner) at every boundary where the winner changes, winner
// being the covering range that `outranks` (a strict order: true when a
// beats b) puts first, or kNoInterval where none covers.
template <typename Start, typename End, typename Outranks, typename Emit>
void SweepIntervals(size_t count, Start start, End end, Outranks outranks, Emit emit) {
  std::vector<uint32_t> by_start(count);
  std::iota(by_start.begin(), by_start.end(), 0u);
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](uint32_t a, uint32_t b) { return start(a) < start(b); });
  std::vector<uint64_t> points;
  points.reserve(count * 2);
  for (uint32_t i = 0; i < count; ++i) {
    points.push_back(start(i));
    points.push_back(end(i));
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());

  auto loses = [&](uint32_t a, uint32_t b) { return outranks(b, a); };
  std::priority_queue<uint32_t, std::vector<uint32_t>, decltype(loses)> active(loses);
  size_t next = 0;
  uint32_t previous = kNoInterval;
  bool first = true;
  for (uint64_t point : points) {
    while (next < by_start.size() && start(by_start[next]) <= point) active.push(by_start[next++]);
    while (!active.empty() && end(active.top()) <= point) active.pop();
    uint32_t winner = active.empty() ? kNoInterval : active.top();
    if (first || winner != previous) emit(point, winner);
    first = false;
    previous = winner;
  }
}

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_INTERVAL_SWEEP_H_
