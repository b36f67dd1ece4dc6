// Collects text from writers that append many small pieces and hands it on in
// large blocks, to a FILE* or to a string. Keeps the first write error, so a
// writer can append freely and check once at the end.
#ifndef PROFCPU_FOLD_OUTPUT_BUFFER_H_
#define PROFCPU_FOLD_OUTPUT_BUFFER_H_

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace profcpu::fold {

class OutputBuffer {
 public:
  // Writes to `file` (not owned).
  explicit OutputBuffer(std::FILE* file);
  // Appends to `*text` (not owned), with no intermediate copy.
  explicit OutputBuffer(std::string* text);
  ~OutputBuffer();

  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  // Where to append. Call MaybeFlush() after appending a bounded amount.
  std::string* buffer() { return buffer_; }
  void Append(absl::string_view text) {
    buffer_->append(text.data(), text.size());
    MaybeFlush();
  }
  void MaybeFlush() {
    if (file_ != nullptr && buffer_->size() >= kFlushBytes) Flush();
  }
  // Writes out everything appended so far (and fflush()es a file). Returns
  // the first error seen since construction.
  absl::Status Finish();

 private:
  static constexpr size_t kFlushBytes = size_t{256} << 10;

  void Flush();

  std::FILE* file_ = nullptr;
  std::string owned_;
  std::string* buffer_;
  absl::Status status_;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_OUTPUT_BUFFER_H_
