#include "symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace profcpu::symbolize {
namespace {

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

}  // namespace

std::string Demangle(absl::string_view name) {
  // Only "_Z" names are mangled functions: __cxa_demangle also accepts bare
  // type encodings, and would turn a C function called "i" into "int".
  if (!absl::StartsWith(name, "_Z") || name.size() > kMaxDemangleLength) {
    return std::string(name);
  }
  // Symbol versions ("_ZN3foo3barEv@@LIB_1.0") are not part of the mangling.
  absl::string_view version;
  if (size_t at = name.find('@'); at != absl::string_view::npos) {
    version = name.substr(at);
    name = name.substr(0, at);
  }
  std::string mangled(name);  // __cxa_demangle wants a NUL-terminated string
  int status = 0;
  std::unique_ptr<char, FreeDeleter> demangled(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status));
  if (status != 0 || demangled == nullptr) return absl::StrCat(name, version);
  return absl::StrCat(demangled.get(), version);
}

}  // namespace profcpu::symbolize
