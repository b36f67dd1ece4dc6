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

#include <cstddef>
#include <string>
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

// The zlib stream in parts, to be written one after the other (so that it
// is never held twice: the page base64-encodes them in turn). `threads` >= 1;
// `work` may be null. `piece_bytes` is for tests.
absl::StatusOr<std::vector<std::string>> DeflateZlibInPieces(
    absl::string_view data, size_t threads, DeflateWork* work = nullptr,
    size_t piece_bytes = kDeflatePieceBytes);

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_DEFLATE_PARALLEL_H_
