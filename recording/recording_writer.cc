#include "recording/recording_writer.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "recording/record_codec.h"

namespace profcpu::recording {
namespace {
constexpr size_t kFrameTargetBytes = 1 << 20;
// Level 3 is zstd's default: about 10x smaller than raw samples at a cost far
// below the sampling itself.
constexpr int kCompressionLevel = 3;
}  // namespace

absl::StatusOr<std::unique_ptr<RecordingWriter>> RecordingWriter::Create(
    const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("create recording ", path));
  auto writer = std::unique_ptr<RecordingWriter>(new RecordingWriter(std::move(fd), path));
  writer->pending_.append(kRecordingMagic, sizeof(kRecordingMagic));
  return writer;
}

RecordingWriter::RecordingWriter(base::UniqueFd fd, std::string path)
    : fd_(std::move(fd)), path_(std::move(path)) {}

RecordingWriter::~RecordingWriter() {
  if (fd_.valid()) (void)Close();
}

absl::Status RecordingWriter::Write(const Record& record) {
  if (!fd_.valid()) return absl::FailedPreconditionError("recording is closed");
  EncodeRecord(record, &pending_);
  ++records_;
  if (pending_.size() >= kFrameTargetBytes) return Flush();
  return absl::OkStatus();
}

absl::Status RecordingWriter::Flush() {
  if (!fd_.valid()) return absl::FailedPreconditionError("recording is closed");
  if (pending_.empty()) return absl::OkStatus();
  compressed_.resize(ZSTD_compressBound(pending_.size()));
  size_t n = ZSTD_compress(compressed_.data(), compressed_.size(), pending_.data(),
                           pending_.size(), kCompressionLevel);
  if (ZSTD_isError(n)) {
    return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(n)));
  }
  absl::Status status = base::WriteAll(fd_.get(), absl::string_view(compressed_.data(), n), path_);
  if (!status.ok()) return status;
  compressed_bytes_ += n;
  pending_.clear();
  return absl::OkStatus();
}

absl::Status RecordingWriter::Close() {
  if (!fd_.valid()) return absl::OkStatus();
  absl::Status status = Flush();
  if (status.ok() && ::fsync(fd_.get()) != 0 && errno != EINVAL) {
    status = base::ErrnoStatus(errno, absl::StrCat("sync ", path_));
  }
  if (::close(fd_.Release()) != 0 && status.ok()) {
    status = base::ErrnoStatus(errno, absl::StrCat("close ", path_));
  }
  return status;
}

}  // namespace profcpu::recording
