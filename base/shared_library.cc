#include "base/shared_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace profcpu::base {

absl::StatusOr<SharedLibrary> SharedLibrary::Open(const std::string& soname,
                                                  absl::string_view package) {
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return absl::UnavailableError(absl::StrCat("cannot load ", soname, " (install ", package,
                                               "): ", why != nullptr ? why : "dlopen failed"));
  }
  return SharedLibrary(handle, soname);
}

void* SharedLibrary::Find(const char* name) const { return ::dlsym(handle_, name); }

absl::Status SharedLibrary::Missing(const char* name) const {
  return absl::UnavailableError(absl::StrCat(soname_, " has no ", name, " (too old?)"));
}

}  // namespace profcpu::base
