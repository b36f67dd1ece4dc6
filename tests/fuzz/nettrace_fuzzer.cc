// The NetTrace stream of an EventPipe session (nettrace/reader.h).
// It comes from the profiled process: hostile. Reading is total and bounded;
// the same bytes read whole and a few bytes at a time give the same events,
// stacks, error and end; every error names an offset and sticks; every event
// has its metadata and a payload inside the input, and a stack made of
// addresses the input holds (nettrace_fuzz_support.h checks these on every
// read). One job per target, each input read twice at most: reading from a
// file with a small stack budget is nettrace_file_fuzzer's; what reads the
// stream's events has targets of its own: the stream filter
// (nettrace_filter_fuzzer), the runtime payload decoders
// (nettrace_payload_fuzzer), the managed-code history
// (nettrace_managed_code_fuzzer) and the events summary
// (nettrace_summary_fuzzer).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nettrace/reader.h"
#include "nettrace/source.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/nettrace_fuzz_support.h"

using profcpu::fuzz::Check;
namespace nettrace = profcpu::nettrace;

namespace {

// Hands out a few bytes per read: blocks arrive in pieces, as from a socket.
class TrickleSource : public nettrace::NettraceSource {
 public:
  explicit TrickleSource(absl::string_view bytes) : bytes_(bytes), sizes_(bytes.size()) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    n = std::min(std::min(n, bytes_.size()), sizes_.Next());
    std::copy(bytes_.data(), bytes_.data() + n, buffer);
    bytes_.remove_prefix(n);
    return n;
  }

 private:
  absl::string_view bytes_;
  profcpu::fuzz::PieceSizes sizes_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes = profcpu::fuzz::AsText(data, size);
  nettrace::NettraceStringSource whole(bytes);
  profcpu::fuzz::NettraceSeen a = profcpu::fuzz::ReadNettraceChecked(&whole, size);
  TrickleSource trickle(bytes);
  profcpu::fuzz::NettraceSeen b = profcpu::fuzz::ReadNettraceChecked(&trickle, size);
  Check(a.events == b.events && a.stacks == b.stacks && a.status == b.status &&
            a.end_offset == b.end_offset,
        "reading whole and a few bytes at a time disagree");
  return 0;
}
