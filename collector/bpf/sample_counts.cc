#include "collector/bpf/sample_counts.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace profcpu::collector {

void SampleCounts::Add(uint32_t pid, uint32_t tid, uint32_t cpu, int32_t kernel_stack,
                       int32_t user_stack, uint64_t period) {
  Sum& sum = counts_[Key{pid, tid, cpu, kernel_stack, user_stack}];
  ++sum.count;
  sum.period += period;
}

uint64_t SampleCounts::Flush(uint64_t now_ns, const Sink& sink) {
  // Sorted so a recording does not depend on the hash table's order.
  std::vector<std::pair<Key, Sum>> sorted(counts_.begin(), counts_.end());
  counts_.clear();
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  uint64_t samples = 0;
  for (const auto& [key, sum] : sorted) {
    recording::StackSample sample;
    sample.time_ns = now_ns;
    std::tie(sample.pid, sample.tid, sample.cpu, sample.kernel_stack, sample.user_stack) = key;
    sample.count = sum.count;
    sample.period = sum.period;
    samples += sum.count;
    sink(std::move(sample));
  }
  return samples;
}

}  // namespace profcpu::collector
