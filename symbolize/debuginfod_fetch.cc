#include "symbolize/debuginfod_fetch.h"

#include <elfutils/debuginfod.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/unique_fd.h"

namespace profcpu::symbolize {
namespace {

struct ClientCloser {
  void operator()(debuginfod_client* client) const { debuginfod_end(client); }
};

int ReportProgress(debuginfod_client* client, long received, long total) {
  auto* progress = static_cast<const FetchProgress*>(debuginfod_get_user_data(client));
  if (progress != nullptr && *progress && received > 0) {
    (*progress)(static_cast<uint64_t>(received), total > 0 ? static_cast<uint64_t>(total) : 0);
  }
  return 0;  // go on
}

// The user's own setting wins.
void SetDefault(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 0); }

absl::Status CopyAll(int from, int to, uint64_t* bytes) {
  struct stat st;
  if (::fstat(from, &st) != 0) return base::ErrnoStatus(errno, "stat the fetched file");
  off_t offset = 0;
  while (offset < st.st_size) {
    ssize_t n = ::sendfile(to, from, &offset, static_cast<size_t>(st.st_size - offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return base::ErrnoStatus(n < 0 ? errno : EIO, "copy the fetched file");
  }
  *bytes = static_cast<uint64_t>(offset);
  return absl::OkStatus();
}

}  // namespace

std::string DebuginfodUrls() {
  const char* urls = ::getenv(DEBUGINFOD_URLS_ENV_VAR);
  return urls == nullptr ? "" : urls;
}

absl::Status FetchFromDebuginfod(absl::string_view build_id, int fd, const FetchLimits& limits,
                                 const FetchProgress& progress, uint64_t* bytes) {
  *bytes = 0;
  SetDefault(DEBUGINFOD_TIMEOUT_ENV_VAR,
             absl::StrCat(std::max<int64_t>(1, absl::ToInt64Seconds(limits.timeout))));
  SetDefault(DEBUGINFOD_MAXSIZE_ENV_VAR, absl::StrCat(limits.max_bytes));
  std::unique_ptr<debuginfod_client, ClientCloser> client(debuginfod_begin());
  if (client == nullptr) return absl::InternalError("libdebuginfod could not start");
  debuginfod_set_user_data(client.get(), const_cast<FetchProgress*>(&progress));
  debuginfod_set_progressfn(client.get(), ReportProgress);
  char* path = nullptr;
  const int found = debuginfod_find_debuginfo(
      client.get(), reinterpret_cast<const unsigned char*>(build_id.data()),
      static_cast<int>(build_id.size()), &path);
  ::free(path);
  if (found < 0) {
    const int error = -found;
    switch (error) {
      case ENOENT:
        return absl::NotFoundError("404");
      case ETIME:
      case ETIMEDOUT:
        return absl::DeadlineExceededError("timed out (DEBUGINFOD_TIMEOUT; -symbol-timeout)");
      case EFBIG:
        return absl::ResourceExhaustedError("too large (DEBUGINFOD_MAXSIZE; -symbol-max-mb)");
      default:
        return absl::UnavailableError(std::strerror(error));
    }
  }
  base::UniqueFd fetched(found);
  return CopyAll(fetched.get(), fd, bytes);
}

}  // namespace profcpu::symbolize
