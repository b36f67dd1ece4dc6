#ifndef PROFCPU_BASE_PARALLEL_SORT_H_
#define PROFCPU_BASE_PARALLEL_SORT_H_

#include <algorithm>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace profcpu::base {

// std::sort of `items` on up to `threads` threads: runs of at least 16,384
// items sorted side by side, then merged pairwise, each level's merges side
// by side. Not stable, like std::sort: callers whose equal items may come in
// any order use it (deep, distinct stacks spend seconds comparing).
template <typename T, typename Less>
void SortOnThreads(std::vector<T>* items, Less less, size_t threads) {
  const size_t runs = std::clamp<size_t>(items->size() / 16384, 1, std::max<size_t>(threads, 1));
  if (runs == 1) {
    std::sort(items->begin(), items->end(), less);
    return;
  }
  std::vector<size_t> bounds(runs + 1);
  for (size_t i = 0; i <= runs; ++i) bounds[i] = items->size() * i / runs;
  auto at = [items, &bounds](size_t run) {
    return items->begin() + bounds[std::min(run, bounds.size() - 1)];
  };
  auto side_by_side = [](std::vector<std::function<void()>>& jobs) {
    std::vector<std::thread> helpers;
    for (size_t i = 1; i < jobs.size(); ++i) helpers.emplace_back(jobs[i]);
    if (!jobs.empty()) jobs[0]();
    for (std::thread& helper : helpers) helper.join();
  };
  std::vector<std::function<void()>> jobs;
  for (size_t run = 0; run < runs; ++run) {
    jobs.push_back([&at, &less, run] { std::sort(at(run), at(run + 1), less); });
  }
  side_by_side(jobs);
  for (size_t width = 1; width < runs; width *= 2) {
    jobs.clear();
    for (size_t run = 0; run + width < runs; run += 2 * width) {
      jobs.push_back([&at, &less, run, width] {
        std::inplace_merge(at(run), at(run + width), at(run + 2 * width), less);
      });
    }
    side_by_side(jobs);
  }
}

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_PARALLEL_SORT_H_
