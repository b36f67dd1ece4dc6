// The NetTrace stream of an EventPipe session (nettrace/reader.h).
// It comes from the profiled process: hostile. Reading is total and bounded;
// the same bytes read whole, a few bytes at a time and from a file give the
// same events and the same error; every error names an offset; every event
// has its metadata and a payload inside the input, and a stack made of
// addresses the input holds; a smaller stack budget changes no event but
// may empty some stacks; the runtime payload decoders take any payload. The
// stream filter (nettrace/stream_filter.h) fed the same bytes a few at a
// time writes no more than it read, and what it writes of a stream the
// reader reads whole is read whole too, with exactly the events it kept.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/types/span.h"
#include "fold/dotnet_events_summary.h"
#include "nettrace/reader.h"
#include "nettrace/runtime_events.h"
#include "nettrace/stream_filter.h"
#include "symbolize/managed_code_events.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace fold = profcpu::fold;
namespace nettrace = profcpu::nettrace;
namespace symbolize = profcpu::symbolize;

namespace {

// Sizes of 1 to 16 bytes, in an order drawn from the input's length: pieces
// of every small size end at every kind of place (3 bytes every time cost
// most of this target's time and covered less).
class PieceSizes {
 public:
  explicit PieceSizes(size_t seed) : state_(seed * 0x9e3779b97f4a7c15u + 1) {}
  size_t Next() {
    state_ ^= state_ << 13;  // xorshift64: never 0 from a state that is not
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return 1 + state_ % 16;
  }

 private:
  uint64_t state_;
};

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
  PieceSizes sizes_;
};

// What a pass read, as digests: a string per event cost an allocation each,
// a good part of this target's time under ASan.
struct Seen {
  std::vector<size_t> events;  // each event's fields and payload
  std::vector<size_t> stacks;  // each event's stack; 0: none
  absl::Status status;
  uint64_t end_offset = 0;
};

void DecodeAll(const nettrace::NettraceEvent& e, int32_t pointer_size) {
  const uint32_t v = e.metadata->version;
  (void)nettrace::DecodeGcStart(e.payload, v);
  (void)nettrace::DecodeGcEnd(e.payload, v);
  (void)nettrace::DecodeGcSuspendEeBegin(e.payload, v);
  (void)nettrace::DecodeGcHeapStats(e.payload, v);
  (void)nettrace::DecodeGcAllocationTick(e.payload, v, pointer_size);
  (void)nettrace::DecodeExceptionThrown(e.payload, v, pointer_size);
  (void)nettrace::DecodeContentionStart(e.payload, v, pointer_size);
  (void)nettrace::DecodeContentionStop(e.payload, v);
  (void)nettrace::DecodeMethodLoadVerbose(e.payload, v);
  (void)nettrace::DecodeMethodJittingStarted(e.payload, v);
  (void)nettrace::DecodeThreadPoolWorkerThread(e.payload, v);
  (void)nettrace::DecodeThreadPoolAdjustment(e.payload, v);
  (void)nettrace::DecodeModuleLoad(e.payload, v);
}

Seen ReadWith(nettrace::NettraceSource* source, size_t size, bool decode,
              nettrace::NettraceLimits limits = {}) {
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
    if (decode) DecodeAll(e, reader.trace().pointer_size);
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
  Seen a = ReadWith(&whole, size, /*decode=*/true);
  TrickleSource trickle(bytes);
  Seen b = ReadWith(&trickle, size, /*decode=*/false);
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
  Seen c = ReadWith(&fd_source, size, /*decode=*/false, small);
  Check(a.events == c.events && a.status == c.status && a.end_offset == c.end_offset,
        "reading a string and a file with a stack budget disagree");
  for (size_t i = 0; i < c.stacks.size(); ++i) {
    Check(c.stacks[i] == 0 || c.stacks[i] == a.stacks[i],
          "a stack budget changed a stack it kept");
  }
  // Every other event dropped, as the collector's budget may.
  uint64_t asked = 0;
  nettrace::NettraceStreamFilter filter(
      [&asked, size](const auto&, const auto&, size_t bytes, uint64_t) {
        Check(bytes > 0 && bytes <= size, "an event's size outside the input");
        return asked++ % 2 == 0;
      });
  std::string filtered;
  absl::Status filter_status;
  PieceSizes pieces(bytes.size() + 1);
  for (size_t at = 0, piece = 0; at < bytes.size() && filter_status.ok(); at += piece) {
    piece = pieces.Next();
    filter_status = filter.Feed(bytes.substr(at, piece), &filtered);
  }
  // Re-encoded headers may grow (a dropped event held fields the next now
  // carries), padding differs: bounded all the same.
  Check(filtered.size() <= size + size / 4 + 80 * filter.events_kept() + 64,
        "the filter wrote far more than it read");
  if (a.status.ok() && filter_status.ok()) {
    Check(filter.ended(), "the filter missed the end of a stream the reader read whole");
    nettrace::NettraceStringSource out(filtered);
    Seen f = ReadWith(&out, filtered.size(), /*decode=*/false);
    Check(f.status.ok(), "the filter wrote a stream the reader cannot read");
    Check(f.events.size() == filter.events_kept(), "the filter's output lost or gained events");
  }
  // The managed code history (names for the symbolizer) from the same bytes:
  // every range it keeps is non-empty and opens before it closes.
  nettrace::NettraceStringSource again(bytes);
  auto code = symbolize::ReadManagedCode(&again);
  if (code.ok()) {
    Check(code->methods.size() <= size, "more methods than input bytes");
    for (const auto& m : code->methods) {
      Check(m.size > 0, "an empty method range");
      Check(m.load_ns <= m.unload_ns, "a method unloaded before it was loaded");
    }
  }
  // The summary and its timeline (the events lane, perf_script.out's runtime
  // events): bounded, in time order.
  fold::DotnetEventsSummary summary;
  Check(fold::SummarizeDotnetEvents(file.path(), 1, &summary).ok(),
        "a summary of a readable file failed");
  Check(summary.timeline.size() <= fold::kMaxTimelineEvents, "an unbounded timeline");
  Check(summary.timeline.size() <= size, "more timeline events than input bytes");
  for (size_t i = 1; i < summary.timeline.size(); ++i) {
    Check(summary.timeline[i - 1].start_ns <= summary.timeline[i].start_ns,
          "a timeline out of time order");
  }
  return 0;
}
