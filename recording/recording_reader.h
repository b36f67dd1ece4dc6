// Reads a recording back, record by record, with bounded memory. The input is
// treated as hostile: corrupt compression or records give a DataLoss error
// naming how far reading got; a file cut short (profcpu was killed) reads up to
// its last complete record and reports truncated().
#ifndef PROFCPU_RECORDING_RECORDING_READER_H_
#define PROFCPU_RECORDING_RECORDING_READER_H_

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "recording/records.h"

namespace profcpu::recording {

class RecordingReader {
 public:
  static absl::StatusOr<std::unique_ptr<RecordingReader>> Open(const std::string& path);
  ~RecordingReader();

  // The next record, or nullopt at the end of the recording.
  absl::StatusOr<std::optional<Record>> Next();
  // The same into `*record` (false at the end), reusing its memory: a
  // sample decoded into a sample allocates nothing.
  absl::StatusOr<bool> NextInto(Record* record);

  // True once Next() returned nullopt because the file ended mid-frame or
  // mid-record (the collector did not finish).
  bool truncated() const { return truncated_; }
  uint64_t records_read() const { return records_; }
  uint64_t unknown_records_skipped() const { return unknown_skipped_; }

 private:
  RecordingReader(base::UniqueFd fd, std::string path);
  // Decompresses more input into decoded_. Returns false at end of file.
  absl::StatusOr<bool> Fill();

  base::UniqueFd fd_;
  std::string path_;
  ZSTD_DCtx* dctx_ = nullptr;
  std::string input_;
  size_t input_pos_ = 0;
  std::string decoded_;
  size_t decoded_pos_ = 0;
  size_t last_zstd_result_ = 0;  // 0 when the last frame was complete
  bool magic_checked_ = false;
  bool eof_ = false;
  bool truncated_ = false;
  uint64_t records_ = 0;
  uint64_t unknown_skipped_ = 0;
};

}  // namespace profcpu::recording

#endif  // PROFCPU_RECORDING_RECORDING_READER_H_
