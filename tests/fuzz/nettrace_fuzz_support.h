// What the NetTrace fuzz targets share: the sizes of the pieces a stream is
// fed in, and a plain read to the end.
#ifndef PROFCPU_TESTS_FUZZ_NETTRACE_FUZZ_SUPPORT_H_
#define PROFCPU_TESTS_FUZZ_NETTRACE_FUZZ_SUPPORT_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "nettrace/reader.h"
#include "nettrace/source.h"

namespace profcpu::fuzz {

// Sizes of 1 to 16 bytes, in an order drawn from a seed (the input's
// length): pieces of every small size end at every kind of place (3 bytes
// every time cost more calls and covered less).
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

}  // namespace profcpu::fuzz

#endif  // PROFCPU_TESTS_FUZZ_NETTRACE_FUZZ_SUPPORT_H_
