// Collects text from writers that append many small pieces and hands it on in
// large blocks, to a FILE* or to a string. Keeps the first write error, so a
// writer can append freely and check once at the end.
//
// A file is written by a thread of its own once the first block is full: the
// kernel's copy into the page cache (a third of the time of writing a large
// perf script) then runs beside the formatting of the next block, on the
// other core, instead of after it.
#ifndef PROFCPU_FOLD_OUTPUT_BUFFER_H_
#define PROFCPU_FOLD_OUTPUT_BUFFER_H_

#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

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

  // A file sink whose writer knows an upper bound of the output's size:
  // reserves the file's blocks at once (fallocate), which makes the writes
  // after it cheaper (ext4 allocates block by block otherwise: a third of a
  // large perf script's write time). The file's size is still only what was
  // written, at any time; Finish() gives back the reserved blocks not used.
  // Best effort: a pipe or a filesystem without it writes as usual.
  void Preallocate(uint64_t bytes);

 private:
  static constexpr size_t kFlushBytes = size_t{1} << 20;

  // Hands the buffer to the writer thread (waiting for the block before it).
  void Flush();
  // Waits until the writer thread has written everything handed to it.
  void WaitForWriter();
  void WriterLoop();

  std::FILE* file_ = nullptr;
  bool preallocated_ = false;
  uint64_t written_ = 0;  // bytes the writer thread wrote (guarded by mutex_)
  std::string owned_;
  std::string* buffer_;
  absl::Status status_;

  // The writer thread and the block it writes; guarded by mutex_ (status_
  // too, while the thread runs).
  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string in_flight_;
  bool pending_ = false;   // in_flight_ holds a block to write
  bool stopping_ = false;
};

// Creates the file at `path` and has `write` fill it through an OutputBuffer;
// the first error of writing or closing.
absl::Status WriteFileThrough(const std::string& path,
                              const std::function<absl::Status(OutputBuffer*)>& write);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_OUTPUT_BUFFER_H_
