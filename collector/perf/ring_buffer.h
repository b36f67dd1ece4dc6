// The mmap'd ring buffer of a perf event (perf_event_open(2), "MMAP layout"):
// a metadata page followed by 2^n data pages the kernel writes records into.
// We read from data_tail to data_head and publish the new tail so the kernel
// can reuse the space.
#ifndef PROFCPU_COLLECTOR_PERF_RING_BUFFER_H_
#define PROFCPU_COLLECTOR_PERF_RING_BUFFER_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::collector {

class RingBuffer {
 public:
  // Maps `data_pages` (a power of two) data pages of `fd`'s buffer.
  static absl::StatusOr<std::unique_ptr<RingBuffer>> Map(int fd, size_t data_pages);
  ~RingBuffer();
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;

  // Calls `on_record` with each complete record (header included, contiguous
  // even when it wraps around the end of the buffer). Returns how many bytes
  // were consumed.
  size_t Drain(const std::function<void(absl::string_view record)>& on_record);

  int fd() const { return fd_; }
  // Times the buffer held a record header too small to be valid.
  uint64_t corrupt_records() const { return corrupt_records_; }

 private:
  RingBuffer(int fd, void* base, size_t mapped_size, size_t data_size);

  int fd_;
  void* base_;
  size_t mapped_size_;
  size_t data_size_;
  std::string wrap_buffer_;
  uint64_t corrupt_records_ = 0;
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PERF_RING_BUFFER_H_
