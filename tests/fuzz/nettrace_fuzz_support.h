// What the NetTrace fuzz targets share: the sizes of the pieces a stream is
// fed in, a read that checks what every read keeps, and a plain read to the end.
#ifndef PROFCPU_TESTS_FUZZ_NETTRACE_FUZZ_SUPPORT_H_
#define PROFCPU_TESTS_FUZZ_NETTRACE_FUZZ_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "nettrace/reader.h"
#include "nettrace/source.h"
#include "tests/fuzz/fuzz_support.h"

namespace profcpu::fuzz {

// Sizes of pieces a stream arrives in, drawn from a seed (the input's
// length): half of them 1 to 16 bytes, so pieces end at every kind of place
// and split a field even twice, half 1 to 256 bytes, so a block's body takes
// a few reads, not one per 8 bytes (1 to 16 every time made the trickled pass
// cost as much as the whole read and libFuzzer together).
class PieceSizes {
 public:
  explicit PieceSizes(size_t seed) : state_(seed * 0x9e3779b97f4a7c15u + 1) {}
  size_t Next() {
    state_ ^= state_ << 13;  // xorshift64: never 0 from a state that is not
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return 1 + (state_ >> 1) % ((state_ & 1) ? 16 : 256);
  }

 private:
  uint64_t state_;
};

struct NettraceReadEnd {
  uint64_t events = 0;
  absl::Status status;  // OK: the stream read to its end
};

// Reads every event of `source`, keeping only how many and how it ended.
inline NettraceReadEnd ReadNettraceToEnd(nettrace::NettraceSource* source) {
  NettraceReadEnd end;
  nettrace::NettraceReader reader(source);
  nettrace::NettraceEvent e;
  while (true) {
    auto more = reader.Next(&e);
    if (!more.ok()) {
      end.status = more.status();
      return end;
    }
    if (!*more) return end;
    ++end.events;
  }
}

// What a read of a stream of `size` bytes gave, as digests (a string per
// event cost an allocation each, a good part of the time under ASan), with
// the invariants every read keeps checked on the way.
struct NettraceSeen {
  std::vector<size_t> events;  // each event's fields and payload
  std::vector<size_t> stacks;  // each event's stack; 0: none
  absl::Status status;
  uint64_t end_offset = 0;
};

inline NettraceSeen ReadNettraceChecked(nettrace::NettraceSource* source, size_t size,
                                        nettrace::NettraceLimits limits = {}) {
  NettraceSeen seen;
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
      Check(!again.ok() && again.status() == more.status(),
            "a nettrace error that did not stick");
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
    seen.stacks.push_back(e.stack.empty() ? 0
                                          : absl::Hash<absl::Span<const uint64_t>>()(e.stack) | 1);
  }
  const nettrace::NettraceCounts& counts = reader.counts();
  Check(counts.events_stack_unknown <= counts.events, "more unknown stacks than events");
  Check(counts.stacks_not_kept <= counts.stacks, "more stacks not kept than read");
  Check(reader.offset() <= size, "the reader went past the end of the input");
  seen.end_offset = reader.offset();
  return seen;
}

}  // namespace profcpu::fuzz

#endif  // PROFCPU_TESTS_FUZZ_NETTRACE_FUZZ_SUPPORT_H_
