// One bounded HTTP(S) download into a file, with libcurl, for the symbol
// servers (symbol_fetcher.h). A server is outside input: it may be down,
// never answer, stall mid-body, redirect in circles or send a body far
// larger than any debug file; each ends the download with an error that
// says which, within the limits, and never holds the body in memory.
#ifndef PROFCPU_SYMBOLIZE_HTTP_FETCH_H_
#define PROFCPU_SYMBOLIZE_HTTP_FETCH_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace profcpu::symbolize {

struct FetchLimits {
  // To connect, and the longest stretch without a byte arriving.
  absl::Duration timeout = absl::Seconds(30);
  // A larger body (announced or as it arrives) is abandoned.
  uint64_t max_bytes = uint64_t{1024} << 20;
};

// Called about once a second while a body arrives: bytes so far, and the
// announced size (0 when unknown).
using FetchProgress = std::function<void(uint64_t received, uint64_t total)>;

// GETs `url` (http or https; up to 5 redirects, to http or https only) into
// the file open at `fd`, from its current position. Errors: NotFound "404"
// (or another 4xx/5xx code), DeadlineExceeded "timed out ...",
// ResourceExhausted "too large ...", Unavailable "connection refused" and the
// like. On success *bytes is the body's size.
absl::Status HttpGetToFile(const std::string& url, int fd, const FetchLimits& limits,
                           const FetchProgress& progress, uint64_t* bytes);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_HTTP_FETCH_H_
