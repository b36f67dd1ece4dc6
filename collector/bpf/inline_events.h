// Decoding of the ring-buffer events that carry stacks inline
// (bpf_events.h): a thread's switch-out (stacks, and with -callgraph fp+cfi
// its user registers and a copy of its user stack) and an on-CPU sample.
// Each is checked against what profcpu.bpf.c writes and copied out, since
// ring-buffer records are only 8-byte aligned by contract; an event that
// does not fit is refused whole.
#ifndef PROFCPU_COLLECTOR_BPF_INLINE_EVENTS_H_
#define PROFCPU_COLLECTOR_BPF_INLINE_EVENTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace profcpu::collector {

// Addresses, innermost first, as the kernel walked them.
struct InlineStacks {
  std::vector<uint64_t> kernel;
  std::vector<uint64_t> user;
};

struct SwitchOutEvent {
  uint32_t tid = 0;
  uint64_t time_ns = 0;
  InlineStacks stacks;
  // {bp, sp, ip} (PROFCPU_LEAF_REGS) or empty; the user stack from sp up.
  std::vector<uint64_t> user_regs;
  std::string user_stack_copy;
};

struct SampleEvent {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint64_t time_ns = 0;
  uint64_t period = 0;
  InlineStacks stacks;
};

// Fill `out` (reusing its buffers) from a PROFCPU_EVENT_SWITCH_OUT /
// PROFCPU_EVENT_SAMPLE_INLINE event of `size` bytes; false if it is not one
// the programs could have written.
bool DecodeSwitchOut(const void* data, size_t size, SwitchOutEvent* out);
bool DecodeSample(const void* data, size_t size, SampleEvent* out);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_BPF_INLINE_EVENTS_H_
