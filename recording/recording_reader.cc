#include "recording/recording_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/byte_io.h"
#include "base/errno_status.h"
#include "base/status_macros.h"
#include "recording/record_codec.h"
#include "recording/recording_writer.h"

namespace profcpu::recording {
namespace {
constexpr size_t kInputChunk = 256 * 1024;
}  // namespace

absl::StatusOr<std::unique_ptr<RecordingReader>> RecordingReader::Open(const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("open recording ", path));
  auto reader = std::unique_ptr<RecordingReader>(new RecordingReader(std::move(fd), path));
  reader->dctx_ = ZSTD_createDCtx();
  if (reader->dctx_ == nullptr) return absl::ResourceExhaustedError("zstd: out of memory");
  return reader;
}

RecordingReader::RecordingReader(base::UniqueFd fd, std::string path)
    : fd_(std::move(fd)), path_(std::move(path)) {}

RecordingReader::~RecordingReader() { ZSTD_freeDCtx(dctx_); }

absl::StatusOr<bool> RecordingReader::Fill() {
  // Drop consumed bytes so the buffer holds at most one record plus a chunk.
  decoded_.erase(0, decoded_pos_);
  decoded_pos_ = 0;
  while (true) {
    if (input_pos_ == input_.size()) {
      if (eof_) return false;
      input_.resize(kInputChunk);
      ssize_t n;
      do {
        n = ::read(fd_.get(), input_.data(), input_.size());
      } while (n < 0 && errno == EINTR);
      if (n < 0) return base::ErrnoStatus(errno, absl::StrCat("read ", path_));
      input_.resize(static_cast<size_t>(n));
      input_pos_ = 0;
      if (n == 0) {
        eof_ = true;
        return false;
      }
    }
    ZSTD_inBuffer in = {input_.data(), input_.size(), input_pos_};
    size_t old_size = decoded_.size();
    decoded_.resize(old_size + ZSTD_DStreamOutSize());
    ZSTD_outBuffer out = {decoded_.data() + old_size, decoded_.size() - old_size, 0};
    size_t result = ZSTD_decompressStream(dctx_, &out, &in);
    input_pos_ = in.pos;
    decoded_.resize(old_size + out.pos);
    if (ZSTD_isError(result)) {
      return absl::DataLossError(absl::StrCat(path_, " is corrupt after ", records_,
                                              " records: ", ZSTD_getErrorName(result)));
    }
    last_zstd_result_ = result;
    if (out.pos > 0) return true;
  }
}

absl::StatusOr<std::optional<Record>> RecordingReader::Next() {
  Record record;
  PROFCPU_ASSIGN_OR_RETURN(bool more, NextInto(&record));
  if (!more) return std::nullopt;
  return std::optional<Record>(std::move(record));
}

absl::StatusOr<bool> RecordingReader::NextInto(Record* out) {
  while (true) {
    size_t available = decoded_.size() - decoded_pos_;
    size_t needed = kRecordPrefixSize;
    if (!magic_checked_) {
      needed = sizeof(kRecordingMagic);
    } else if (available >= kRecordPrefixSize) {
      base::ByteReader prefix(absl::string_view(decoded_).substr(decoded_pos_, kRecordPrefixSize));
      prefix.U32();
      uint32_t size = prefix.U32();
      if (size > kMaxRecordPayload) {
        return absl::DataLossError(absl::StrCat(path_, ": record ", records_ + 1,
                                                " claims ", size, " bytes; file is corrupt"));
      }
      needed = kRecordPrefixSize + size;
    }
    if (available < needed) {
      auto filled = Fill();
      if (!filled.ok()) return filled.status();
      if (*filled) continue;
      // End of input: complete only if the last frame ended and nothing is left over.
      if (decoded_.size() - decoded_pos_ != 0 || last_zstd_result_ != 0 || !magic_checked_) {
        if (!magic_checked_ && decoded_.empty() && records_ == 0 && last_zstd_result_ == 0) {
          return absl::DataLossError(absl::StrCat(path_, " is empty: not a profcpu recording"));
        }
        truncated_ = true;
      }
      return false;
    }
    absl::string_view bytes = absl::string_view(decoded_).substr(decoded_pos_, needed);
    decoded_pos_ += needed;
    if (!magic_checked_) {
      if (std::memcmp(bytes.data(), kRecordingMagic, sizeof(kRecordingMagic)) != 0) {
        return absl::DataLossError(absl::StrCat(path_, " is not a profcpu recording"));
      }
      magic_checked_ = true;
      continue;
    }
    base::ByteReader prefix(bytes);
    uint32_t type = prefix.U32();
    absl::Status decoded = DecodeRecordInto(type, bytes.substr(kRecordPrefixSize), out);
    if (absl::IsNotFound(decoded)) {
      ++unknown_skipped_;
      continue;
    }
    if (!decoded.ok()) {
      return absl::DataLossError(
          absl::StrCat(path_, ": record ", records_ + 1, ": ", decoded.message()));
    }
    ++records_;
    return true;
  }
}

}  // namespace profcpu::recording
