#include "collector/bpf/inline_events.h"

#include <cstring>

#include "collector/bpf/bpf_events.h"

namespace profcpu::collector {
namespace {

constexpr uint32_t kMaxStackBytes = PROFCPU_MAX_STACK_DEPTH * sizeof(uint64_t);

bool ValidStackBytes(uint32_t bytes) {
  return bytes <= kMaxStackBytes && bytes % sizeof(uint64_t) == 0;
}

// Copies `bytes` of u64 words from `from` into `to`.
void CopyWords(const char* from, uint32_t bytes, std::vector<uint64_t>* to) {
  to->resize(bytes / sizeof(uint64_t));
  if (bytes > 0) std::memcpy(to->data(), from, bytes);
}

// The kernel stack then the user stack, right after a header of `header_size`.
const char* CopyStacks(const char* event, size_t header_size, uint32_t kernel_bytes,
                       uint32_t user_bytes, InlineStacks* out) {
  const char* at = event + header_size;
  CopyWords(at, kernel_bytes, &out->kernel);
  at += kernel_bytes;
  CopyWords(at, user_bytes, &out->user);
  return at + user_bytes;
}

}  // namespace

bool DecodeSwitchOut(const void* data, size_t size, SwitchOutEvent* out) {
  profcpu_switch_out header;
  if (size < sizeof(header)) return false;
  std::memcpy(&header, data, sizeof(header));
  if (header.kind != PROFCPU_EVENT_SWITCH_OUT || !ValidStackBytes(header.kernel_bytes) ||
      !ValidStackBytes(header.user_bytes)) {
    return false;
  }
  const bool has_regs = header.regs_bytes == PROFCPU_LEAF_REGS * sizeof(uint64_t);
  if ((!has_regs && header.regs_bytes != 0) || header.copy_bytes > PROFCPU_LEAF_COPY_MAX ||
      (!has_regs && header.copy_bytes != 0)) {
    return false;
  }
  if (size < sizeof(header) + uint64_t{header.kernel_bytes} + header.user_bytes +
                 header.regs_bytes + header.copy_bytes) {
    return false;
  }
  out->tid = header.tid;
  out->time_ns = header.time_ns;
  const char* at = CopyStacks(static_cast<const char*>(data), sizeof(header), header.kernel_bytes,
                              header.user_bytes, &out->stacks);
  CopyWords(at, header.regs_bytes, &out->user_regs);
  out->user_stack_copy.assign(at + header.regs_bytes, header.copy_bytes);
  return true;
}

bool DecodeSample(const void* data, size_t size, SampleEvent* out) {
  profcpu_sample_inline header;
  if (size < sizeof(header)) return false;
  std::memcpy(&header, data, sizeof(header));
  if (header.kind != PROFCPU_EVENT_SAMPLE_INLINE || !ValidStackBytes(header.kernel_bytes) ||
      !ValidStackBytes(header.user_bytes) ||
      size < sizeof(header) + uint64_t{header.kernel_bytes} + header.user_bytes) {
    return false;
  }
  out->pid = header.pid;
  out->tid = header.tid;
  out->cpu = header.cpu;
  out->time_ns = header.time_ns;
  out->period = header.period;
  CopyStacks(static_cast<const char*>(data), sizeof(header), header.kernel_bytes,
             header.user_bytes, &out->stacks);
  return true;
}

}  // namespace profcpu::collector
