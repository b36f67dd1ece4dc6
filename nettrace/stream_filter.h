// Rewrites a NetTrace stream as it arrives, without the events a caller
// declines: the header, metadata, stack and sequence-point blocks pass
// unchanged; each event block is written again with the kept events only
// (header-compressed blobs re-encoded, blocks.h), and a block left empty is
// left out. Fed chunks of any size (the EventPipe socket's reads); holds at
// most one block. The output is a well-formed stream that the reader
// (reader.h) and other tools read; a dropped event shows only as a gap in its
// thread's sequence numbers, which is how EventPipe itself reports loss.
// Uncompressed (NetTrace 4, .NET Core 3) event blocks pass whole.
#ifndef PROFCPU_NETTRACE_STREAM_FILTER_H_
#define PROFCPU_NETTRACE_STREAM_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nettrace/event.h"

namespace profcpu::nettrace {

class NettraceStreamFilter {
 public:
  // Asked once per event: its metadata, the event, its encoded size in the
  // input and its time (CLOCK_MONOTONIC ns, from the trace's QPC clock).
  using KeepFn = std::function<bool(const NettraceEventMetadata& metadata,
                                    const NettraceEvent& event, size_t bytes, uint64_t time_ns)>;

  // Told the size of every other block passed on whole (stacks, metadata,
  // sequence points), so whoever keeps a byte budget counts them too.
  using PassFn = std::function<void(size_t bytes)>;

  explicit NettraceStreamFilter(KeepFn keep, size_t max_block_bytes = 64 << 20,
                                size_t max_metadata = 1 << 16);

  // Consumes `bytes` and appends what is ready to `out`. After an error
  // (DataLoss naming the input offset) every later call fails the same way;
  // what was appended before is a well-formed prefix.
  absl::Status Feed(absl::string_view bytes, std::string* out);
  // True once the end-of-stream tag passed.
  bool ended() const { return state_ == State::kEnded; }

  void set_on_pass(PassFn on_pass) { on_pass_ = std::move(on_pass); }

  uint64_t events_kept() const { return events_kept_; }
  uint64_t events_dropped() const { return events_dropped_; }

 private:
  enum class State { kHeader, kObjects, kEnded, kFailed };
  // Each returns how many bytes of pending_ it used (0: needs more).
  absl::StatusOr<size_t> TakeHeader(std::string* out);
  absl::StatusOr<size_t> TakeObject(std::string* out);
  absl::Status RewriteEventBlock(absl::string_view body, uint64_t body_offset, std::string* kept);
  absl::Status LearnMetadata(absl::string_view body, uint64_t body_offset);
  void Emit(absl::string_view bytes, std::string* out);
  uint64_t ToMonotonicNs(int64_t qpc) const;

  KeepFn keep_;
  PassFn on_pass_;
  size_t max_block_bytes_;
  size_t max_metadata_;
  State state_ = State::kHeader;
  absl::Status error_;
  std::string pending_;
  uint64_t in_offset_ = 0;   // of pending_'s first byte in the input
  uint64_t out_offset_ = 0;  // bytes emitted: blocks are aligned to it
  int64_t qpc_frequency_ = 1'000'000'000;
  absl::flat_hash_map<uint32_t, std::unique_ptr<NettraceEventMetadata>> metadata_;
  uint64_t events_kept_ = 0;
  uint64_t events_dropped_ = 0;
};

}  // namespace profcpu::nettrace

#endif  // PROFCPU_NETTRACE_STREAM_FILTER_H_
