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
#include "base/shared_library.h"
#include "base/status_macros.h"
#include "base/unique_fd.h"

namespace profcpu::symbolize {
namespace {

// libdebuginfod, loaded on first use (base/shared_library.h), as elfutils'
// own tools load it (DEBUGINFOD_SONAME).
struct DebuginfodApi {
  debuginfod_client* (*begin)();
  void (*end)(debuginfod_client* client);
  int (*find_debuginfo)(debuginfod_client* client, const unsigned char* build_id,
                        int build_id_len, char** path);
  void (*set_progressfn)(debuginfod_client* client, debuginfod_progressfn_t fn);
  void (*set_user_data)(debuginfod_client* client, void* data);
  void* (*get_user_data)(debuginfod_client* client);
};

absl::StatusOr<DebuginfodApi> LoadDebuginfodApi() {
  PROFCPU_ASSIGN_OR_RETURN(base::SharedLibrary lib,
                           base::SharedLibrary::Open(DEBUGINFOD_SONAME, "libdebuginfod1"));
  DebuginfodApi api;
  PROFCPU_RETURN_IF_ERROR(lib.Get("debuginfod_begin", &api.begin));
  PROFCPU_RETURN_IF_ERROR(lib.Get("debuginfod_end", &api.end));
  PROFCPU_RETURN_IF_ERROR(lib.Get("debuginfod_find_debuginfo", &api.find_debuginfo));
  PROFCPU_RETURN_IF_ERROR(lib.Get("debuginfod_set_progressfn", &api.set_progressfn));
  PROFCPU_RETURN_IF_ERROR(lib.Get("debuginfod_set_user_data", &api.set_user_data));
  PROFCPU_RETURN_IF_ERROR(lib.Get("debuginfod_get_user_data", &api.get_user_data));
  return api;
}

absl::StatusOr<const DebuginfodApi*> Debuginfod() {
  static const absl::StatusOr<DebuginfodApi> api = LoadDebuginfodApi();  // once, thread-safe
  if (!api.ok()) return api.status();
  return &*api;
}

struct DebuginfodTransfer {
  const FetchProgress* progress = nullptr;
  uint64_t max_bytes = 0;
  bool too_large = false;
};

// libdebuginfod 0.188 checks DEBUGINFOD_MAXSIZE against the size a server
// announces only: a chunked body is bounded here, by ending the transfer.
int ReportProgress(debuginfod_client* client, long received, long total) {
  absl::StatusOr<const DebuginfodApi*> api = Debuginfod();  // loaded: the client exists
  auto* download = static_cast<DebuginfodTransfer*>((*api)->get_user_data(client));
  if (download == nullptr) return 0;
  if (received > 0 && static_cast<uint64_t>(received) > download->max_bytes) {
    download->too_large = true;
    return 1;  // stop
  }
  if (*download->progress && received > 0) {
    (*download->progress)(static_cast<uint64_t>(received),
                          total > 0 ? static_cast<uint64_t>(total) : 0);
  }
  return 0;  // go on
}

absl::Status DebuginfodTooLarge() {
  return absl::ResourceExhaustedError("too large (DEBUGINFOD_MAXSIZE; -symbol-max-mb)");
}

// The user's own setting wins.
void SetDefault(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 0); }

absl::Status CopyAll(int from, int to, uint64_t max_bytes, uint64_t* bytes) {
  struct stat st;
  if (::fstat(from, &st) != 0) return base::ErrnoStatus(errno, "stat the fetched file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return DebuginfodTooLarge();
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
  // libdebuginfod asks a silent server twice more by default: -symbol-timeout
  // is the wait per server.
  SetDefault(DEBUGINFOD_RETRY_LIMIT_ENV_VAR, "0");
  PROFCPU_ASSIGN_OR_RETURN(const DebuginfodApi* api, Debuginfod());
  auto end = [api](debuginfod_client* c) { api->end(c); };
  std::unique_ptr<debuginfod_client, decltype(end)> client(api->begin(), end);
  if (client == nullptr) return absl::InternalError("libdebuginfod could not start");
  DebuginfodTransfer download{&progress, limits.max_bytes, false};
  api->set_user_data(client.get(), &download);
  api->set_progressfn(client.get(), ReportProgress);
  char* path = nullptr;
  const int found = api->find_debuginfo(
      client.get(), reinterpret_cast<const unsigned char*>(build_id.data()),
      static_cast<int>(build_id.size()), &path);
  ::free(path);
  // find_debuginfo returns an fd of ours, or -errno.
  base::UniqueFd fetched(found >= 0 ? found : -1);
  if (download.too_large) return DebuginfodTooLarge();
  if (found < 0) {
    const int error = -found;
    switch (error) {
      case ENOENT:
        return absl::NotFoundError("404");
      case ETIME:
      case ETIMEDOUT:
        return absl::DeadlineExceededError("timed out (DEBUGINFOD_TIMEOUT; -symbol-timeout)");
      case EFBIG:
        return DebuginfodTooLarge();
      default:
        return absl::UnavailableError(std::strerror(error));
    }
  }
  return CopyAll(fetched.get(), fd, limits.max_bytes, bytes);
}

}  // namespace profcpu::symbolize
