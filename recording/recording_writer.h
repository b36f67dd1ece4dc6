// Writes a recording as it is taken: records are buffered and compressed into
// independent zstd frames (one per Flush, or per ~1 MiB of records), so memory
// stays bounded however long collection runs, and a crash or kill leaves a
// file that reads back up to the last frame written.
#ifndef PROFCPU_RECORDING_RECORDING_WRITER_H_
#define PROFCPU_RECORDING_RECORDING_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "recording/records.h"

namespace profcpu::recording {

// First bytes of every recording once decompressed.
inline constexpr char kRecordingMagic[8] = {'P', 'C', 'P', 'U', 'R', 'E', 'C', '1'};

class RecordingWriter {
 public:
  static absl::StatusOr<std::unique_ptr<RecordingWriter>> Create(const std::string& path);
  ~RecordingWriter();

  // Buffers a record; compresses and writes a frame once ~1 MiB is pending.
  absl::Status Write(const Record& record);
  // Compresses everything pending into one frame and writes it.
  absl::Status Flush();
  // Flushes, syncs and closes. Further writes fail.
  absl::Status Close();

  uint64_t records_written() const { return records_; }
  uint64_t compressed_bytes() const { return compressed_bytes_; }
  const std::string& path() const { return path_; }

 private:
  RecordingWriter(base::UniqueFd fd, std::string path);

  base::UniqueFd fd_;
  std::string path_;
  std::string pending_;
  std::string compressed_;
  uint64_t records_ = 0;
  uint64_t compressed_bytes_ = 0;
};

}  // namespace profcpu::recording

#endif  // PROFCPU_RECORDING_RECORDING_WRITER_H_
