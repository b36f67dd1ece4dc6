// profile.html's data as one zlib stream (RFC 1950) compressed on several
// threads. The data is cut into pieces (2 MiB), each compressed to raw deflate
// by libdeflate on a worker; every piece but the last has its final block
// marked not final and ends with an empty stored block (what zlib's sync
// flush writes: the next piece starts on a byte), so the pieces joined are
// one deflate stream, closed by one Adler-32 of the whole data. The page's
// DecompressionStream("deflate") and zlib's inflate read it as any other.
//
// Why libdeflate at level 8 rather than zlib at 6: on a deep-stack page's
// data (44 MB) zlib took 4.1 s of CPU for 21.9 MB, libdeflate 1.4 s for
// 21.3 MB, and on the small pages of tests/testdata/output_stability its
// output is smaller too (level 6 was 1% larger than zlib's on one of them).
// The bytes do not depend on the thread count: the pieces are fixed.
#ifndef PROFCPU_ARCHIVE_DEFLATE_PARALLEL_H_
#define PROFCPU_ARCHIVE_DEFLATE_PARALLEL_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::archive {

inline constexpr size_t kDeflatePieceBytes = size_t{2} << 20;

// What a call cost, for profcpu.log's "parallel profile.html" line.
struct DeflateWork {
  size_t tasks = 0;            // pieces compressed
  size_t threads = 0;          // threads they ran on (the caller's counted)
  double wall_s = 0;
  double longest_task_s = 0;   // CPU time of the costliest piece
  double task_cpu_s = 0;       // CPU time of all pieces
};

// The same zlib stream for data made piece by piece (profile.html's data,
// encoded while its first pieces are compressed): each piece is compressed
// on a worker as soon as it is added and released once compressed, so the
// whole data is never held. The bytes are DeflateZlibInPieces' of the data
// joined, whatever the thread count.
class ZlibPieceStream {
 public:
  // `threads` >= 1 compress, the caller among them: the helpers start as
  // pieces come, and the caller compresses a piece itself when more than
  // the helpers' count wait (which bounds the pieces held).
  explicit ZlibPieceStream(size_t threads, size_t piece_bytes = kDeflatePieceBytes);
  ~ZlibPieceStream();
  ZlibPieceStream(const ZlibPieceStream&) = delete;
  ZlibPieceStream& operator=(const ZlibPieceStream&) = delete;

  size_t piece_bytes() const { return piece_bytes_; }
  size_t pieces() const { return pieces_.size(); }

  // A piece of exactly piece_bytes(), not the data's last.
  void Add(std::string piece);
  // The data's last piece (up to piece_bytes(), after at least one Add):
  // the stream's parts, written one after the other. `work` may be null;
  // its wall_s is the time the caller spent compressing or waiting, in Add
  // and here.
  absl::StatusOr<std::vector<std::string>> Finish(std::string last, DeflateWork* work = nullptr);

 private:
  struct Piece {
    std::string input;   // released once compressed
    size_t input_bytes = 0;
    bool last = false;
    std::string output;  // raw deflate, joinable unless the last
    uint32_t adler = 1;
    double cpu_s = 0;
    absl::Status status;
  };
  // Compresses the next piece not yet taken; false if there is none.
  bool CompressNext(std::unique_lock<std::mutex>& lock);
  void HelperLoop();

  const size_t threads_;
  const size_t piece_bytes_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Piece> pieces_;  // references stay valid as pieces are added
  size_t next_ = 0;           // the first piece no thread has taken
  size_t done_ = 0;           // pieces compressed
  bool closing_ = false;
  std::vector<std::thread> helpers_;
  double caller_s_ = 0;
};

// The zlib stream in parts, to be written one after the other (so that it
// is never held twice: the page base64-encodes them in turn). `threads` >= 1;
// `work` may be null. `piece_bytes` is for tests.
absl::StatusOr<std::vector<std::string>> DeflateZlibInPieces(
    absl::string_view data, size_t threads, DeflateWork* work = nullptr,
    size_t piece_bytes = kDeflatePieceBytes);

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_DEFLATE_PARALLEL_H_
