// The managed code history the symbolizer names .NET frames with
// (symbolize/managed_code_events.h), read from a NetTrace stream the profiled
// process wrote: hostile. Reading is bounded by the input, and every method
// range it keeps is non-empty and opens before it closes. The stream's own
// framing is nettrace_fuzzer's.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "nettrace/source.h"
#include "symbolize/managed_code_events.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace nettrace = profcpu::nettrace;
namespace symbolize = profcpu::symbolize;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nettrace::NettraceStringSource source(profcpu::fuzz::AsText(data, size));
  auto code = symbolize::ReadManagedCode(&source);
  if (!code.ok()) return 0;
  Check(code->methods.size() <= size, "more methods than input bytes");
  for (const auto& m : code->methods) {
    Check(m.size > 0, "an empty method range");
    Check(m.load_ns <= m.unload_ns, "a method unloaded before it was loaded");
  }
  return 0;
}
