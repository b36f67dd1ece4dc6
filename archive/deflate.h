// zlib's deflate in one call, with the container a reader expects: gzip
// (profile.pb.gz) or zlib (profile.html's data, which the page inflates
// with DecompressionStream("deflate")).
#ifndef PROFCPU_ARCHIVE_DEFLATE_H_
#define PROFCPU_ARCHIVE_DEFLATE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::archive {

enum class DeflateContainer { kGzip, kZlib };

absl::StatusOr<std::string> Deflate(absl::string_view data, DeflateContainer container);

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_DEFLATE_H_
