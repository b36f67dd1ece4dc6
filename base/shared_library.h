// A shared library opened when a feature first needs it (dlopen), not linked:
// every profcpu command pays at start-up for each library it links and the
// dozens those pull in (libcurl alone brings TLS, HTTP/2, LDAP, SSH...), while
// only symbol fetching and the fleet store (base/curl_library.h) use them.
#ifndef PROFCPU_BASE_SHARED_LIBRARY_H_
#define PROFCPU_BASE_SHARED_LIBRARY_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::base {

class SharedLibrary {
 public:
  // dlopen(`soname`); the error names `package`, the Debian package that
  // provides it ("libcurl4").
  static absl::StatusOr<SharedLibrary> Open(const std::string& soname, absl::string_view package);

  SharedLibrary(SharedLibrary&& other) noexcept = default;
  SharedLibrary& operator=(SharedLibrary&&) noexcept = default;
  SharedLibrary(const SharedLibrary&) = delete;
  // Never closed: the functions handed out stay valid for the process.
  ~SharedLibrary() = default;

  // Sets *function to the symbol `name`; an error names the library and the
  // symbol (an older version without it).
  template <typename F>
  absl::Status Get(const char* name, F* function) const {
    void* symbol = Find(name);
    if (symbol == nullptr) return Missing(name);
    *function = reinterpret_cast<F>(symbol);
    return absl::OkStatus();
  }

 private:
  explicit SharedLibrary(void* handle, std::string soname)
      : handle_(handle), soname_(std::move(soname)) {}
  void* Find(const char* name) const;
  absl::Status Missing(const char* name) const;

  void* handle_ = nullptr;
  std::string soname_;
};

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_SHARED_LIBRARY_H_
