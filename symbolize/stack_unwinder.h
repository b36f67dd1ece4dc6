// The interface fold's replay uses to turn a -callgraph dwarf sample (user
// registers and a copy of the user stack) into a call chain, without opening
// a file itself: symbolize/dwarf_unwinder.h implements it from the target's
// .eh_frame/.debug_frame right after collection, and unwound_stacks.h replays
// the saved result anywhere else.
#ifndef PROFCPU_SYMBOLIZE_STACK_UNWINDER_H_
#define PROFCPU_SYMBOLIZE_STACK_UNWINDER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "recording/records.h"
#include "symbolize/address_space.h"

namespace profcpu::symbolize {

struct UnwoundStack {
  // Leaf first: the sampled instruction pointer, then return addresses, as
  // a frame-pointer call chain is.
  std::vector<uint64_t> ips;
  // The walk stopped before the outermost frame (stack copy exhausted, no
  // unwind information, an unreadable file, the frame limit).
  bool truncated = false;
};

class UserStackUnwinder {
 public:
  virtual ~UserStackUnwinder() = default;
  // Called for every sample with user registers, in recording order.
  // `regs_mask` is the header's user_regs_mask; `spaces` is the replay's view
  // of the process's mappings at the sample's time.
  virtual UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                              const AddressSpaceTracker& spaces) = 0;
};

// The value of perf register `perf_reg` (enum perf_event_x86_regs) in a
// sample taken with `regs_mask`: the sample's registers are the mask's set
// bits in increasing order. nullopt when the mask lacks it or the sample is short.
inline std::optional<uint64_t> UserRegister(const recording::Sample& sample, uint64_t regs_mask,
                                            int perf_reg) {
  if (perf_reg < 0 || perf_reg >= 64 || ((regs_mask >> perf_reg) & 1) == 0) return std::nullopt;
  size_t index = static_cast<size_t>(__builtin_popcountll(regs_mask & ((uint64_t{1} << perf_reg) - 1)));
  if (index >= sample.user_regs.size()) return std::nullopt;
  return sample.user_regs[index];
}

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_STACK_UNWINDER_H_
