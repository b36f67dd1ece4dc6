#include "archive/deflate.h"

#include <zlib.h>

#include <limits>

#include "absl/strings/str_cat.h"

namespace profcpu::archive {

absl::StatusOr<std::string> Deflate(absl::string_view data, DeflateContainer container) {
  if (data.size() > std::numeric_limits<uInt>::max()) {
    return absl::InvalidArgumentError("data over 4 GiB cannot be compressed in one piece");
  }
  z_stream stream = {};
  // 15 window bits: a zlib header and trailer; + 16: gzip's instead.
  const int window_bits = container == DeflateContainer::kGzip ? 15 + 16 : 15;
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("zlib deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, data.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  const size_t written = stream.total_out;
  deflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return absl::InternalError(absl::StrCat("zlib deflate failed (", result, ")"));
  }
  out.resize(written);
  return out;
}

}  // namespace profcpu::archive
