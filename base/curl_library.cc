#include "base/curl_library.h"

#include "base/shared_library.h"
#include "base/status_macros.h"

namespace profcpu::base {
namespace {

absl::StatusOr<CurlApi> LoadCurlApi() {
  absl::StatusOr<SharedLibrary> lib = SharedLibrary::Open("libcurl.so.4", "libcurl4");
  if (!lib.ok()) lib = SharedLibrary::Open("libcurl-gnutls.so.4", "libcurl4");
  if (!lib.ok()) return lib.status();
  CurlApi api;
  PROFCPU_RETURN_IF_ERROR(lib->Get("curl_global_init", &api.global_init));
  PROFCPU_RETURN_IF_ERROR(lib->Get("curl_easy_init", &api.easy_init));
  PROFCPU_RETURN_IF_ERROR(lib->Get("curl_easy_setopt", &api.easy_setopt));
  PROFCPU_RETURN_IF_ERROR(lib->Get("curl_easy_perform", &api.easy_perform));
  PROFCPU_RETURN_IF_ERROR(lib->Get("curl_easy_getinfo", &api.easy_getinfo));
  PROFCPU_RETURN_IF_ERROR(lib->Get("curl_easy_cleanup", &api.easy_cleanup));
  PROFCPU_RETURN_IF_ERROR(lib->Get("curl_easy_strerror", &api.easy_strerror));
  PROFCPU_RETURN_IF_ERROR(lib->Get("curl_slist_append", &api.slist_append));
  PROFCPU_RETURN_IF_ERROR(lib->Get("curl_slist_free_all", &api.slist_free_all));
  api.global_init(CURL_GLOBAL_DEFAULT);
  return api;
}

}  // namespace

absl::StatusOr<const CurlApi*> Curl() {
  static const absl::StatusOr<CurlApi> api = LoadCurlApi();  // once, thread-safe
  if (!api.ok()) return api.status();
  return &*api;
}

}  // namespace profcpu::base
