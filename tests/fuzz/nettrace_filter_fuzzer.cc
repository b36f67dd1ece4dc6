// The stream filter (nettrace/stream_filter.h) that drops events from a
// .NET process's NetTrace stream as it arrives, before it is saved: fed the
// target's bytes a few at a time, with every other event dropped (as the
// collector's budget may), it writes no more than it read plus bounded
// re-encoding, never claims an event outside the input, and what it writes of
// a stream the reader reads whole is read whole too, with exactly the events
// it kept. The reader's own invariants are nettrace_fuzzer's.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nettrace/source.h"
#include "nettrace/stream_filter.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/nettrace_fuzz_support.h"

using profcpu::fuzz::Check;
namespace nettrace = profcpu::nettrace;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes = profcpu::fuzz::AsText(data, size);
  uint64_t asked = 0;
  nettrace::NettraceStreamFilter filter(
      [&asked, size](const auto&, const auto&, size_t bytes, uint64_t) {
        Check(bytes > 0 && bytes <= size, "an event's size outside the input");
        return asked++ % 2 == 0;
      });
  std::string filtered;
  absl::Status filter_status;
  profcpu::fuzz::PieceSizes pieces(bytes.size() + 1);
  for (size_t at = 0, piece = 0; at < bytes.size() && filter_status.ok(); at += piece) {
    piece = pieces.Next();
    filter_status = filter.Feed(bytes.substr(at, piece), &filtered);
  }
  // Re-encoded headers may grow (a dropped event held fields the next now
  // carries), padding differs: bounded all the same.
  Check(filtered.size() <= size + size / 4 + 80 * filter.events_kept() + 64,
        "the filter wrote far more than it read");
  if (!filter_status.ok()) return 0;
  // The filter's output read whole with the kept events, or the input itself
  // not readable whole: the input is read only when the first fails, so most
  // inputs cost the filter and one read of its (smaller) output.
  bool output_read_whole = false;
  if (filter.ended()) {
    nettrace::NettraceStringSource out(filtered);
    profcpu::fuzz::NettraceReadEnd f = profcpu::fuzz::ReadNettraceToEnd(&out);
    output_read_whole = f.status.ok() && f.events == filter.events_kept();
  }
  if (output_read_whole) return 0;
  nettrace::NettraceStringSource whole(bytes);
  if (!profcpu::fuzz::ReadNettraceToEnd(&whole).status.ok()) return 0;
  Check(filter.ended(), "the filter missed the end of a stream the reader read whole");
  Check(false, "the filter wrote a stream the reader cannot read, or lost or gained events");
  return 0;
}
