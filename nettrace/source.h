// Where a NetTrace stream's bytes come from: the EventPipe session's socket
// or a saved .nettrace file (an fd), or bytes in memory (tests, the fuzzer).
// The reader pulls from a source a bounded amount at a time (reader.h).
#ifndef PROFCPU_NETTRACE_SOURCE_H_
#define PROFCPU_NETTRACE_SOURCE_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::nettrace {

// Read fills up to `n` bytes and returns how many (0 at the end of the
// stream).
class NettraceSource {
 public:
  virtual ~NettraceSource() = default;
  virtual absl::StatusOr<size_t> Read(char* buffer, size_t n) = 0;
};

// Over bytes held by the caller (tests, the fuzzer).
class NettraceStringSource : public NettraceSource {
 public:
  explicit NettraceStringSource(absl::string_view bytes) : bytes_(bytes) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override;

 private:
  absl::string_view bytes_;
};

// Over a file descriptor the caller keeps open (a saved .nettrace file).
class NettraceFdSource : public NettraceSource {
 public:
  explicit NettraceFdSource(int fd) : fd_(fd) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override;

 private:
  int fd_;
};

}  // namespace profcpu::nettrace

#endif  // PROFCPU_NETTRACE_SOURCE_H_
