// On-CPU samples of the BPF backend counted in user space: each sample
// arrives with its stacks (inline events), the stacks get their recording
// ids, and samples of one (thread, CPU, stacks) are summed until the next
// flush, once a second: a recording as small as the in-kernel counts it
// replaced made it, without a kernel map that can fill.
#ifndef PROFCPU_COLLECTOR_BPF_SAMPLE_COUNTS_H_
#define PROFCPU_COLLECTOR_BPF_SAMPLE_COUNTS_H_

#include <cstdint>
#include <functional>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "recording/records.h"

namespace profcpu::collector {

class SampleCounts {
 public:
  using Sink = std::function<void(recording::Record&&)>;

  void Add(uint32_t pid, uint32_t tid, uint32_t cpu, int32_t kernel_stack, int32_t user_stack,
           uint64_t period);
  // Emits one StackSample stamped `now_ns` per (thread, CPU, stacks) added
  // since the last flush, in a stable order, and starts over. Returns the
  // number of samples they sum up.
  uint64_t Flush(uint64_t now_ns, const Sink& sink);
  bool empty() const { return counts_.empty(); }

 private:
  using Key = std::tuple<uint32_t, uint32_t, uint32_t, int32_t, int32_t>;
  struct Sum {
    uint64_t count = 0;
    uint64_t period = 0;
  };
  absl::flat_hash_map<Key, Sum> counts_;
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_BPF_SAMPLE_COUNTS_H_
