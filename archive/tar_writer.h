// Writes a POSIX tar stream (ustar headers, with a pax extended header before
// an entry whose name or size ustar cannot hold) to a sink: GNU tar, bsdtar,
// Python's tarfile and tar_reader.h read it. Regular files only, mode 0644,
// owner 0: what prof.tar.gz holds. Ends with the two zero blocks POSIX asks
// for and no padding to tar's 10 KiB records (readers of a compressed stream
// do not need it).
#ifndef PROFCPU_ARCHIVE_TAR_WRITER_H_
#define PROFCPU_ARCHIVE_TAR_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace profcpu::archive {

// The header blocks for a regular file: a pax header when `name` does not fit
// ustar's name and prefix fields or `size` its 11 octal digits, then the ustar
// header.
std::string FileHeaderBlocks(absl::string_view name, uint64_t size, int64_t mtime);

class TarWriter {
 public:
  using Sink = std::function<absl::Status(absl::string_view)>;
  explicit TarWriter(Sink sink) : sink_(std::move(sink)) {}

  // Starts a regular file of `size` bytes, which WriteData must then supply
  // in full. InvalidArgument for an empty name or one with a NUL.
  absl::Status BeginFile(absl::string_view name, uint64_t size, int64_t mtime);
  absl::Status WriteData(absl::string_view data);
  // Pads the last file and writes the end-of-archive blocks.
  absl::Status Finish();

 private:
  absl::Status EndFile();

  Sink sink_;
  std::string name_;        // the file being written, for errors
  uint64_t remaining_ = 0;  // bytes it still owes
  uint64_t written_ = 0;    // bytes of it written
  bool in_file_ = false;
};

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_TAR_WRITER_H_
