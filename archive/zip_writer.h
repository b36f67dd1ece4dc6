// Writes a zip file (PKWARE's APPNOTE 6.3.10): deflated entries, the sizes and
// CRC-32 put into each local header once its data is written (the output is
// a file, so no data descriptors), Zip64 records where a size or offset
// needs them. PerfView's NAME.trace.zip (System.IO.Compression), unzip and
// Python's zipfile read it.
#ifndef PROFCPU_ARCHIVE_ZIP_WRITER_H_
#define PROFCPU_ARCHIVE_ZIP_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace profcpu::archive {

class ZipWriter {
 public:
  // Writes to `fd` (not owned) from its start. `force_zip64` writes Zip64
  // records for every entry and the end, as a file past 4 GiB would (tests).
  explicit ZipWriter(int fd, bool force_zip64 = false) : fd_(fd), force_zip64_(force_zip64) {}

  // Adds `size` bytes read from `source_fd` (`source_path` for errors).
  absl::Status AddFile(absl::string_view name, int source_fd, const std::string& source_path,
                       uint64_t size, int64_t mtime);
  // The central directory and its end records.
  absl::Status Finish();

 private:
  struct Entry {
    std::string name;
    uint64_t offset = 0;  // of its local header
    uint64_t compressed = 0;
    uint64_t size = 0;
    uint32_t crc = 0;
    uint16_t dos_time = 0;
    uint16_t dos_date = 0;
    bool zip64 = false;  // its local header holds a Zip64 extra field
  };

  absl::Status Append(absl::string_view bytes);

  int fd_;
  bool force_zip64_;
  uint64_t offset_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_ZIP_WRITER_H_
