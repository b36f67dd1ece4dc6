#include "archive/archive_input.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/unique_fd.h"

namespace profcpu::archive {
namespace {

constexpr size_t kInputBuffer = 256 * 1024;

// Reads `fd` through a buffer the gzip reader can look into.
class FileInput {
 public:
  FileInput(base::UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  // Buffered bytes not yet consumed.
  absl::string_view available() const {
    return absl::string_view(buffer_.data() + begin_, end_ - begin_);
  }
  void Consume(size_t n) { begin_ += n; }
  // Reads more after what is buffered; false at the end of the file.
  absl::StatusOr<bool> Fill() {
    if (begin_ == end_) begin_ = end_ = 0;
    if (end_ == buffer_.size()) {  // keep the unconsumed tail, make room
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    while (true) {
      ssize_t n = ::read(fd_.get(), buffer_.data() + end_, buffer_.size() - end_);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return base::ErrnoStatus(errno, absl::StrCat("read ", path_));
      end_ += static_cast<size_t>(n);
      return n > 0;
    }
  }
  const std::string& path() const { return path_; }

 private:
  base::UniqueFd fd_;
  std::string path_;
  std::vector<char> buffer_ = std::vector<char>(kInputBuffer);
  size_t begin_ = 0;
  size_t end_ = 0;
};

class PlainSource : public ByteSource {
 public:
  explicit PlainSource(FileInput input) : input_(std::move(input)) {}
  absl::StatusOr<size_t> Read(char* out, size_t size) override {
    if (input_.available().empty()) {
      absl::StatusOr<bool> more = input_.Fill();
      if (!more.ok()) return more.status();
      if (!*more) return 0;
    }
    const size_t n = std::min(size, input_.available().size());
    std::memcpy(out, input_.available().data(), n);
    input_.Consume(n);
    return n;
  }

 private:
  FileInput input_;
};

bool StartsWithGzipMagic(absl::string_view bytes) {
  return bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b';
}

class GzipSource : public ByteSource {
 public:
  explicit GzipSource(FileInput input) : input_(std::move(input)) {}
  ~GzipSource() override {
    if (initialized_) inflateEnd(&stream_);
  }

  absl::Status Init() {
    // 15 + 16: a gzip header and trailer (the trailer's CRC-32 and length are
    // checked by zlib at each member's end).
    if (inflateInit2(&stream_, 15 + 16) != Z_OK) return absl::InternalError("zlib inflateInit2");
    initialized_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> Read(char* out, size_t size) override {
    size = std::min<size_t>(size, 1u << 30);  // avail_out is 32-bit
    while (!finished_) {
      if (member_ended_) {
        // Another member, or the end: bytes after the last member that are
        // not gzip (tape padding) end the stream, as gzip and libarchive treat them.
        while (input_.available().size() < 2) {
          absl::StatusOr<bool> more = input_.Fill();
          if (!more.ok()) return more.status();
          if (!*more) break;
        }
        if (!StartsWithGzipMagic(input_.available())) {
          finished_ = true;
          break;
        }
        inflateReset(&stream_);
        member_ended_ = false;
      }
      if (input_.available().empty()) {
        absl::StatusOr<bool> more = input_.Fill();
        if (!more.ok()) return more.status();
        if (!*more) {
          return absl::DataLossError(absl::StrCat(input_.path(), ": the gzip data ends early"));
        }
      }
      absl::string_view in = input_.available();
      stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      stream_.avail_in = static_cast<uInt>(std::min<size_t>(in.size(), 1u << 30));
      stream_.next_out = reinterpret_cast<Bytef*>(out);
      stream_.avail_out = static_cast<uInt>(size);
      const int result = inflate(&stream_, Z_NO_FLUSH);
      input_.Consume(in.size() - stream_.avail_in);
      const size_t produced = size - stream_.avail_out;
      if (result == Z_STREAM_END) {
        member_ended_ = true;
      } else if (result != Z_OK && result != Z_BUF_ERROR) {
        return absl::DataLossError(absl::StrCat(input_.path(), ": corrupt gzip data (",
                                                stream_.msg ? stream_.msg : "zlib error", ")"));
      }
      if (produced > 0) return produced;
    }
    return 0;
  }

 private:
  FileInput input_;
  z_stream stream_ = {};
  bool initialized_ = false;
  bool member_ended_ = false;
  bool finished_ = false;
};

}  // namespace

absl::StatusOr<size_t> StringSource::Read(char* out, size_t size) {
  const size_t n = std::min(size, data_.size());
  std::memcpy(out, data_.data(), n);
  data_.remove_prefix(n);
  return n;
}

absl::StatusOr<std::unique_ptr<ByteSource>> OpenArchiveInput(const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("open ", path));
  FileInput input(std::move(fd), path);
  while (input.available().size() < 2) {
    absl::StatusOr<bool> more = input.Fill();
    if (!more.ok()) return more.status();
    if (!*more) break;
  }
  if (!StartsWithGzipMagic(input.available())) {
    return std::unique_ptr<ByteSource>(new PlainSource(std::move(input)));
  }
  auto gzip = std::make_unique<GzipSource>(std::move(input));
  absl::Status status = gzip->Init();
  if (!status.ok()) return status;
  return std::unique_ptr<ByteSource>(std::move(gzip));
}

}  // namespace profcpu::archive
