#include "symbolize/http_fetch.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/curl_library.h"
#include "base/status_macros.h"

namespace profcpu::symbolize {
namespace {

struct Transfer {
  int fd = -1;
  uint64_t max_bytes = 0;
  uint64_t received = 0;
  bool too_large = false;
  int write_errno = 0;
  const FetchProgress* progress = nullptr;
  absl::Time last_progress = absl::InfinitePast();
};

size_t WriteBody(char* data, size_t size, size_t count, void* opaque) {
  auto* t = static_cast<Transfer*>(opaque);
  const size_t n = size * count;
  if (t->received + n > t->max_bytes) {
    t->too_large = true;
    return 0;  // libcurl ends the transfer with CURLE_WRITE_ERROR
  }
  for (size_t done = 0; done < n;) {
    ssize_t w = ::write(t->fd, data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      t->write_errno = w < 0 ? errno : EIO;
      return 0;
    }
    done += static_cast<size_t>(w);
  }
  t->received += n;
  return n;
}

int Progress(void* opaque, curl_off_t total, curl_off_t received, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(opaque);
  const absl::Time now = absl::Now();
  if (*t->progress && received > 0 && now - t->last_progress >= absl::Seconds(1)) {
    t->last_progress = now;
    (*t->progress)(static_cast<uint64_t>(received), total > 0 ? static_cast<uint64_t>(total) : 0);
  }
  return 0;
}

absl::Status TooLarge(uint64_t max_bytes) {
  return absl::ResourceExhaustedError(
      absl::StrCat("too large (over ", max_bytes >> 20, " MB; -symbol-max-mb)"));
}

}  // namespace

absl::Status HttpGetToFile(const std::string& url, int fd, const FetchLimits& limits,
                           const FetchProgress& progress, uint64_t* bytes) {
  PROFCPU_ASSIGN_OR_RETURN(const base::CurlApi* api, base::Curl());
  auto cleanup = [api](CURL* c) { api->easy_cleanup(c); };
  std::unique_ptr<CURL, decltype(cleanup)> curl(api->easy_init(), cleanup);
  if (curl == nullptr) return absl::InternalError("libcurl could not start a transfer");
  Transfer t;
  t.fd = fd;
  t.max_bytes = limits.max_bytes;
  t.progress = &progress;
  const long seconds = static_cast<long>(
      std::max<int64_t>(1, absl::ToInt64Seconds(limits.timeout)));
  CURL* c = curl.get();
  api->easy_setopt(c, CURLOPT_URL, url.c_str());
  api->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  api->easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  // Microsoft's server answers with a redirect to its blob storage.
  api->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  api->easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
  api->easy_setopt(c, CURLOPT_FAILONERROR, 1L);
  api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(c, CURLOPT_USERAGENT, "profcpu");
  api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT, seconds);
  // A server that accepts and never answers, or stalls mid-body: less than
  // a byte a second for `timeout` ends the transfer.
  api->easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  api->easy_setopt(c, CURLOPT_LOW_SPEED_TIME, seconds);
  api->easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limits.max_bytes));
  api->easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteBody);
  api->easy_setopt(c, CURLOPT_WRITEDATA, &t);
  api->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, Progress);
  api->easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  api->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  const CURLcode code = api->easy_perform(c);
  *bytes = t.received;
  if (code == CURLE_OK) return absl::OkStatus();
  long status = 0;
  api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  switch (code) {
    case CURLE_HTTP_RETURNED_ERROR:
      if (status == 404) return absl::NotFoundError("404");
      return absl::UnavailableError(absl::StrCat("HTTP ", status));
    case CURLE_OPERATION_TIMEDOUT:
      return absl::DeadlineExceededError(
          absl::StrCat("timed out (nothing for ", seconds, " s; -symbol-timeout)"));
    case CURLE_FILESIZE_EXCEEDED:
      return TooLarge(limits.max_bytes);
    case CURLE_WRITE_ERROR:
      if (t.too_large) return TooLarge(limits.max_bytes);
      return absl::InternalError(absl::StrCat("cannot write the download: ",
                                              std::strerror(t.write_errno)));
    case CURLE_COULDNT_CONNECT:
      return absl::UnavailableError("connection refused");
    default:
      return absl::UnavailableError(api->easy_strerror(code));
  }
}

}  // namespace profcpu::symbolize
