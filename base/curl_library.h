// libcurl, loaded on first use (base/shared_library.h) rather than linked:
// the symbol servers' downloads (symbolize/http_fetch.cc) and the fleet
// store's client (fleet/store/clickhouse_client.cc) share one loader, so the
// commands that never speak HTTP pay nothing for libcurl at start-up.
// Debian's OpenSSL build is preferred, else the GnuTLS one libdebuginfod1
// depends on.
#ifndef PROFCPU_BASE_CURL_LIBRARY_H_
#define PROFCPU_BASE_CURL_LIBRARY_H_

#include <curl/curl.h>

#include "absl/status/statusor.h"

namespace profcpu::base {

// The libcurl functions profcpu calls, resolved from the loaded library.
struct CurlApi {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL* curl, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL* curl);
  CURLcode (*easy_getinfo)(CURL* curl, CURLINFO info, ...);
  void (*easy_cleanup)(CURL* curl);
  const char* (*easy_strerror)(CURLcode code);
  curl_slist* (*slist_append)(curl_slist* list, const char* line);
  void (*slist_free_all)(curl_slist* list);
};

// Loads libcurl once (thread-safe) and initializes it; later calls return
// the same table, or the same error (naming the libcurl4 package).
absl::StatusOr<const CurlApi*> Curl();

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_CURL_LIBRARY_H_
