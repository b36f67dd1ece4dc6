// The NetTrace stream of an EventPipe session (nettrace/reader.h).
// It comes from the profiled process: hostile. Reading is total and bounded;
// the same bytes read whole, a few bytes at a time and from a file give the
// same events and the same error; every error names an offset and sticks;
// every event has its metadata and a payload inside the input, and a stack
// made of addresses the input holds; a smaller stack budget changes no event
// but may empty some stacks. What reads the stream's events is fuzzed by
// targets of its own, each on one pass: the stream filter
// (nettrace_filter_fuzzer), the runtime payload decoders
// (nettrace_payload_fuzzer), the managed-code history
// (nettrace_managed_code_fuzzer) and the events summary
// (nettrace_summary_fuzzer).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/types/span.h"
#include "nettrace/reader.h"
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
    n = std::min({n, bytes_.size(), sizes_.Next()});
    std::copy(bytes_.data(), bytes_.data() + n, buffer);
    bytes_.remove_prefix(n);
    return n;
  }

 private:
  absl::string_view bytes_;
  profcpu::fuzz::PieceSizes sizes_;
};

// What a pass read, as digests: a string per event cost an allocation each,
// a good part of this target's time under ASan.
struct Seen {
  std::vector<size_t> events;  // each event's fields and payload
  std::vector<size_t> stacks;  // each event's stack; 0: none
  absl::Status status;
  uint64_t end_offset = 0;
};

Seen ReadWith(nettrace::NettraceSource* source, size_t size, nettrace::NettraceLimits limits = {}) {
  Seen seen;
  nettrace::NettraceReader reader(source, limits);
  nettrace::NettraceEvent e;
  while (true) {
    auto more = reader.Next(&e);
    if (!more.ok()) {
      seen.status = more.status();
      Check(absl::StrContains(more.status().message(), "nettrace offset"),
            "a nettrace error that names no offset");
      // Errors stick.
      auto again = reader.Next(&e);
      Check(!again.ok() && again.status() == more.status(), "a nettrace error that did not stick");
      break;
    }
    if (!*more) break;
    Check(e.metadata != nullptr, "an event without metadata");
    Check(e.metadata->metadata_id != 0, "an event with metadata id 0");
    Check(e.payload.size() <= size, "a payload larger than the input");
    Check(e.offset < size, "an event past the end of the input");
    Check(seen.events.size() < size, "more events than input bytes");
    // Every address came from a stack block of the input.
    Check(e.stack.size() * static_cast<size_t>(reader.trace().pointer_size) <= size,
          "a stack larger than the input");
    Check(e.stack_id != 0 || e.stack.empty(), "a stack for stack id 0");
    (void)reader.ToTime(e.timestamp);
    seen.events.push_back(absl::Hash<std::tuple<absl::string_view, uint32_t, uint32_t, uint64_t,
                                                uint64_t, int64_t, absl::string_view>>()(
        std::make_tuple(absl::string_view(e.metadata->provider), e.metadata->event_id,
                        e.metadata->version, e.offset, e.thread_id, e.timestamp, e.payload)));
    seen.stacks.push_back(e.stack.empty() ? 0 : absl::Hash<absl::Span<const uint64_t>>()(e.stack) | 1);
  }
  const nettrace::NettraceCounts& counts = reader.counts();
  Check(counts.events_stack_unknown <= counts.events, "more unknown stacks than events");
  Check(counts.stacks_not_kept <= counts.stacks, "more stacks not kept than read");
  Check(reader.offset() <= size, "the reader went past the end of the input");
  seen.end_offset = reader.offset();
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes = profcpu::fuzz::AsText(data, size);
  nettrace::NettraceStringSource whole(bytes);
  Seen a = ReadWith(&whole, size);
  TrickleSource trickle(bytes);
  Seen b = ReadWith(&trickle, size);
  Check(a.events == b.events && a.stacks == b.stacks && a.status == b.status &&
            a.end_offset == b.end_offset,
        "reading whole and a few bytes at a time disagree");
  // From a file, with a stack budget of a few addresses: the same events,
  // error and end, some stacks not kept, those kept as they were (an input
  // this small never fills the default budget).
  profcpu::fuzz::MemFile file(bytes);
  nettrace::NettraceFdSource fd_source(file.fd());
  nettrace::NettraceLimits small;
  small.max_stack_bytes = 64;
  Seen c = ReadWith(&fd_source, size, small);
  Check(a.events == c.events && a.status == c.status && a.end_offset == c.end_offset,
        "reading a string and a file with a stack budget disagree");
  for (size_t i = 0; i < c.stacks.size(); ++i) {
    Check(c.stacks[i] == 0 || c.stacks[i] == a.stacks[i],
          "a stack budget changed a stack it kept");
  }
  return 0;
}
