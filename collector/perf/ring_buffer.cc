#include "collector/perf/ring_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"

namespace profcpu::collector {

absl::StatusOr<std::unique_ptr<RingBuffer>> RingBuffer::Map(int fd, size_t data_pages) {
  if (data_pages == 0 || (data_pages & (data_pages - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring buffer pages must be a power of two, got ", data_pages));
  }
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t size = (data_pages + 1) * page;
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int err = errno;
    if (err == EPERM) {
      return absl::PermissionDeniedError(absl::StrCat(
          "mmap of the perf ring buffer (", size / 1024,
          " KiB) was refused: it exceeds kernel.perf_event_mlock_kb for an unprivileged user; "
          "use a smaller -mmap-pages or run with CAP_IPC_LOCK"));
    }
    return base::ErrnoStatus(err, "mmap perf ring buffer");
  }
  return std::unique_ptr<RingBuffer>(new RingBuffer(fd, base, size, data_pages * page));
}

RingBuffer::RingBuffer(int fd, void* base, size_t mapped_size, size_t data_size)
    : fd_(fd), base_(base), mapped_size_(mapped_size), data_size_(data_size) {}

RingBuffer::~RingBuffer() { ::munmap(base_, mapped_size_); }

size_t RingBuffer::Drain(const std::function<void(absl::string_view record)>& on_record) {
  auto* meta = static_cast<perf_event_mmap_page*>(base_);
  const char* data = static_cast<const char*>(base_) + meta->data_offset;
  // The kernel publishes data_head with a store-release; pair it with an
  // acquire so the record bytes are visible before we read them.
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  uint64_t start = tail;
  while (tail + sizeof(perf_event_header) <= head) {
    size_t offset = tail % data_size_;
    perf_event_header header;
    if (offset + sizeof(header) <= data_size_) {
      std::memcpy(&header, data + offset, sizeof(header));
    } else {
      size_t first = data_size_ - offset;
      std::memcpy(&header, data + offset, first);
      std::memcpy(reinterpret_cast<char*>(&header) + first, data, sizeof(header) - first);
    }
    if (header.size < sizeof(header)) {
      // Cannot happen with a sane kernel; never spin on it: drop what is left.
      ++corrupt_records_;
      tail = head;
      break;
    }
    if (tail + header.size > head) break;
    if (offset + header.size <= data_size_) {
      on_record(absl::string_view(data + offset, header.size));
    } else {
      size_t first = data_size_ - offset;
      wrap_buffer_.assign(data + offset, first);
      wrap_buffer_.append(data, header.size - first);
      on_record(wrap_buffer_);
    }
    tail += header.size;
  }
  // Release: our reads of the records happen before the kernel may overwrite them.
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  return static_cast<size_t>(tail - start);
}

}  // namespace profcpu::collector
