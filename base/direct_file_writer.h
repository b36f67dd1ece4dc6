// Writes a large new output file around the page cache (O_DIRECT), from a
// thread of its own. perf_script.out of deep stacks is ~13 kB a sample, close
// to a gigabyte for a minute of two busy threads; through write(2) the
// kernel copies all of it into freshly allocated page-cache pages, which on
// a small VM cost more CPU than formatting the text (copy_folio_from_iter
// was half of postprocess's cycles on bench/postprocess.sh's deep_tree row,
// 1.9 s of system time per 800 MB against 0.35 s direct). Such a file is
// read back at most once during the run (the PerfView export zips its text),
// so keeping it cached buys little.
//
// Text is copied into two aligned blocks; a full block goes to the writer
// thread while the other fills. Finish() writes the last, partial block
// without O_DIRECT (its length is not a multiple of the alignment) and
// returns the first error. A filesystem that refuses O_DIRECT (at open or at
// the first write) gets ordinary writes of the same bytes: the file's
// content never depends on the path taken.
#ifndef PROFCPU_BASE_DIRECT_FILE_WRITER_H_
#define PROFCPU_BASE_DIRECT_FILE_WRITER_H_

#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/unique_fd.h"

namespace profcpu::base {

class DirectFileWriter {
 public:
  // Creates (or truncates) `path`.
  static absl::StatusOr<std::unique_ptr<DirectFileWriter>> Create(const std::string& path);
  ~DirectFileWriter();

  DirectFileWriter(const DirectFileWriter&) = delete;
  DirectFileWriter& operator=(const DirectFileWriter&) = delete;

  void Append(absl::string_view text) {
    if (text.size() < kBlockBytes - filled_) {  // the common case: a line
      std::memcpy(blocks_[filling_].get() + filled_, text.data(), text.size());
      filled_ += text.size();
      return;
    }
    AppendAcrossBlocks(text);
  }
  // Reserves `bytes` of blocks up front (fallocate, best effort): ext4
  // otherwise allocates as the file grows. The file ends where the text does.
  void Reserve(uint64_t bytes);
  // Writes what is left and closes the file; the first error since Create.
  absl::Status Finish();

  bool direct() const { return direct_; }  // still bypassing the page cache

 private:
  // A multiple of every block device's logical block size in use (512, 4096).
  static constexpr size_t kAlignment = 4096;
  static constexpr size_t kBlockBytes = size_t{4} << 20;
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  struct FreeDeleter {
    void operator()(char* p) const { std::free(p); }
  };

  DirectFileWriter(UniqueFd fd, std::string path, bool direct);
  static std::unique_ptr<char, FreeDeleter> NewBlock();
  void AppendAcrossBlocks(absl::string_view text);
  // Hands the filled block to the writer thread, after the one before it.
  void Submit();
  void WaitForWriter();
  void WriterLoop();
  // Writes `size` bytes at the file's end; falls back to ordinary writes if
  // O_DIRECT is refused. Sets status_ on failure (guarded by the caller).
  absl::Status WriteAll(const char* data, size_t size);
  void DropDirect();

  UniqueFd fd_;
  const std::string path_;
  bool direct_;
  bool reserved_ = false;
  std::unique_ptr<char, FreeDeleter> blocks_[2];
  int filling_ = 0;         // the block Append copies into
  size_t filled_ = 0;       // bytes in it
  uint64_t submitted_ = 0;  // bytes handed to the writer (the file's size after it)
  bool finished_ = false;

  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  absl::Status status_;      // guarded by mutex_ while the writer runs
  bool pending_ = false;     // the writer owns blocks_[in_flight_]
  int in_flight_ = 0;
  size_t in_flight_bytes_ = 0;
  bool stopping_ = false;
};

// `contents` as the file at `path`: through a DirectFileWriter from
// kDirectFileMinBytes on, smaller ones through the page cache.
inline constexpr size_t kDirectFileMinBytes = size_t{4} << 20;
absl::Status WriteFileDirect(const std::string& path, absl::string_view contents);

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_DIRECT_FILE_WRITER_H_
