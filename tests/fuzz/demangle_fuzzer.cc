// Symbol names from the target's ELF files go through the C++ demangler, whose
// recursion follows the name's structure (symbolize/demangle.h caps length).
#include "symbolize/demangle.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view name = profcpu::fuzz::AsText(data, size);
  std::string out = profcpu::symbolize::Demangle(name);
  // Also as the mangled names look in real tables.
  if (size < profcpu::symbolize::kMaxDemangleLength) {
    (void)profcpu::symbolize::Demangle(std::string("_Z") + std::string(name));
  }
  return 0;
}
