// The NetTrace reader (nettrace/reader.h) reading a .NET process's stream
// from a file, as profcpu reads dotnet/PID.nettrace after a run, with a
// stack budget of a few addresses: the same events, error and end as the
// bytes read whole from a string with the default budget, some stacks not
// kept, those kept as they were (an input this small never fills the
// default budget). What every read keeps (offsets in errors, bounds) is
// checked on both reads (nettrace_fuzz_support.h); reading in pieces is
// nettrace_fuzzer's.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "nettrace/reader.h"
#include "nettrace/source.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/nettrace_fuzz_support.h"

using profcpu::fuzz::Check;
namespace nettrace = profcpu::nettrace;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes = profcpu::fuzz::AsText(data, size);
  nettrace::NettraceStringSource whole(bytes);
  profcpu::fuzz::NettraceSeen a = profcpu::fuzz::ReadNettraceChecked(&whole, size);
  profcpu::fuzz::MemFile file(bytes);
  nettrace::NettraceFdSource fd_source(file.fd());
  nettrace::NettraceLimits small;
  small.max_stack_bytes = 64;
  profcpu::fuzz::NettraceSeen c = profcpu::fuzz::ReadNettraceChecked(&fd_source, size, small);
  Check(a.events == c.events && a.status == c.status && a.end_offset == c.end_offset,
        "reading a string and a file with a stack budget disagree");
  for (size_t i = 0; i < c.stacks.size(); ++i) {
    Check(c.stacks[i] == 0 || c.stacks[i] == a.stacks[i], "a stack budget changed a stack it kept");
  }
  return 0;
}
