// The interface fold's replay uses to turn a -callgraph dwarf sample (user
// registers and a copy of the user stack) into a call chain, and to repair
// the leaf of a -callgraph fp+cfi chain, without opening a file itself: symbolize/dwarf_unwinder.h implements it from the target's
// .eh_frame/.debug_frame right after collection, and unwound_stacks.h replays
// the saved result anywhere else.
#ifndef PROFCPU_SYMBOLIZE_STACK_UNWINDER_H_
#define PROFCPU_SYMBOLIZE_STACK_UNWINDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
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

// The user registers and stack bytes a sample or an off-CPU stay carries,
// as the unwinders read them (views into the record).
struct UserStackCopy {
  uint64_t time_ns = 0;  // the record's time and thread: saved results are checked against them
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t regs_abi = 0;  // 0: none (a kernel thread)
  uint64_t regs_mask = 0;  // the header's user_regs_mask
  const std::vector<uint64_t>* regs = nullptr;
  absl::string_view stack;  // from the stack pointer up
};

inline UserStackCopy StackCopyOf(const recording::Sample& sample, uint64_t regs_mask) {
  return {sample.time_ns, sample.pid,    sample.tid,       sample.user_regs_abi,
          regs_mask,      &sample.user_regs, sample.user_stack};
}
inline UserStackCopy StackCopyOf(const recording::OffCpuSample& stay, uint64_t regs_mask) {
  return {stay.time_ns, stay.pid,       stay.tid,           stay.user_regs_abi,
          regs_mask,    &stay.user_regs, stay.user_stack_copy};
}

class UserStackUnwinder {
 public:
  virtual ~UserStackUnwinder() = default;
  // Called for every sample with user registers, in recording order.
  // `regs_mask` is the header's user_regs_mask; `spaces` is the replay's view
  // of the process's mappings at the sample's time.
  virtual UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                              const AddressSpaceTracker& spaces) = 0;
  // -callgraph fp+cfi, for every sample and off-CPU stay with a copy, in
  // recording order: `chain` is the kernel's frame-pointer user chain (leaf
  // first). Frame pointers miss the callers of a leaf that has not set up
  // its frame (a frameless libc wrapper, a prologue or epilogue); this
  // returns the chain with them put back where the copy shows them, or
  // `chain` unchanged. The base class cannot read files: unchanged.
  virtual UnwoundStack RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                                  const AddressSpaceTracker& spaces) {
    (void)copy;
    (void)spaces;
    return {chain, false};
  }

  // The parallel replay (fold/profile_builder_parallel.h). An unwinder one
  // of `workers` worker threads asks on its own about the samples of its
  // time slices (in time order), over the same files, answering as this one
  // would; null when only this one can answer, in recording order (a saved
  // file's answers come in that order).
  virtual std::unique_ptr<UserStackUnwinder> NewWorker(size_t workers) {
    (void)workers;
    return nullptr;
  }
  // A worker's answers handed back in recording order, kept as this one's
  // own would be (SavingUnwinder saves them).
  virtual void TookUnwind(uint64_t time_ns, uint32_t tid, const UnwoundStack& answer) {
    (void)time_ns;
    (void)tid;
    (void)answer;
  }
  virtual void TookRepair(uint64_t time_ns, uint32_t tid, const std::vector<uint64_t>& chain,
                          const UnwoundStack& answer) {
    (void)time_ns;
    (void)tid;
    (void)chain;
    (void)answer;
  }
  // After the replay: a worker's counts and warnings added to this one's.
  virtual void AddWorker(UserStackUnwinder& worker) { (void)worker; }
};

// The value of perf register `perf_reg` (enum perf_event_x86_regs) in a
// sample taken with `regs_mask`: the sample's registers are the mask's set
// bits in increasing order. nullopt when the mask lacks it or the sample is short.
inline std::optional<uint64_t> UserRegister(const std::vector<uint64_t>& regs, uint64_t regs_mask,
                                            int perf_reg) {
  if (perf_reg < 0 || perf_reg >= 64 || ((regs_mask >> perf_reg) & 1) == 0) return std::nullopt;
  size_t index = static_cast<size_t>(__builtin_popcountll(regs_mask & ((uint64_t{1} << perf_reg) - 1)));
  if (index >= regs.size()) return std::nullopt;
  return regs[index];
}
inline std::optional<uint64_t> UserRegister(const recording::Sample& sample, uint64_t regs_mask,
                                            int perf_reg) {
  return UserRegister(sample.user_regs, regs_mask, perf_reg);
}

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_STACK_UNWINDER_H_
