// The bytes of a tar stream: from a .tar.gz (gzip members inflated one after
// the other, RFC 1952 2.2: parallel_gzip.h writes many), from a plain .tar
// (anything not starting with gzip's magic is passed through, as libarchive
// did), or from memory. Memory stays bounded: one input buffer and zlib's
// 32 KiB window, whatever the archive holds.
#ifndef PROFCPU_ARCHIVE_ARCHIVE_INPUT_H_
#define PROFCPU_ARCHIVE_ARCHIVE_INPUT_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::archive {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to `size` bytes into `out`; 0 at the end only.
  virtual absl::StatusOr<size_t> Read(char* out, size_t size) = 0;
};

class StringSource : public ByteSource {
 public:
  explicit StringSource(absl::string_view data) : data_(data) {}
  absl::StatusOr<size_t> Read(char* out, size_t size) override;

 private:
  absl::string_view data_;
};

// Opens `path`, inflating it when it is gzip. Errors name the path.
absl::StatusOr<std::unique_ptr<ByteSource>> OpenArchiveInput(const std::string& path);

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_ARCHIVE_INPUT_H_
