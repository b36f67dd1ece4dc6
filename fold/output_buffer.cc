#include "fold/output_buffer.h"

#include <cerrno>

#include "base/errno_status.h"

namespace profcpu::fold {

OutputBuffer::OutputBuffer(std::FILE* file) : file_(file), buffer_(&owned_) {
  owned_.reserve(kFlushBytes + (kFlushBytes >> 2));
}

OutputBuffer::OutputBuffer(std::string* text) : buffer_(text) {}

OutputBuffer::~OutputBuffer() {
  // A writer that returned early still leaves what it wrote.
  if (file_ != nullptr) Flush();
}

void OutputBuffer::Flush() {
  if (buffer_->empty()) return;
  if (status_.ok() && std::fwrite(buffer_->data(), 1, buffer_->size(), file_) != buffer_->size()) {
    status_ = base::ErrnoStatus(errno, "write output");
  }
  buffer_->clear();
}

absl::Status OutputBuffer::Finish() {
  if (file_ != nullptr) {
    Flush();
    if (status_.ok() && std::fflush(file_) != 0) status_ = base::ErrnoStatus(errno, "flush output");
  }
  return status_;
}

}  // namespace profcpu::fold
