// unwound_stacks.bin: the user call chains the DWARF unwinder computed for a
// recording's -callgraph dwarf samples, kept in the run folder (and archive)
// so that postprocess, on a machine without the target's files, replays the
// very same chains instead of unwinding again.
//
// Format, version 1 (little-endian):
//   magic    8 bytes "PCUNWND1"
//   entries  until the end, one per DWARF sample in recording order:
//              u64 time_ns, u32 tid, u8 flags (bit 0: truncated),
//              u32 n (at most 4096), n x u64 ips (leaf first)
// Each entry repeats its sample's time and thread so a file that does not
// belong to the recording is noticed at its first entry.
#ifndef PROFCPU_SYMBOLIZE_UNWOUND_STACKS_H_
#define PROFCPU_SYMBOLIZE_UNWOUND_STACKS_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "symbolize/stack_unwinder.h"

namespace profcpu::symbolize {

inline constexpr char kUnwoundStacksMagic[] = "PCUNWND1";

// Unwinds with `inner` and appends every result to `path` (created on the
// first DWARF sample, so frame-pointer recordings leave no file).
class SavingUnwinder : public UserStackUnwinder {
 public:
  SavingUnwinder(UserStackUnwinder* inner, std::string path);
  ~SavingUnwinder() override;
  UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                      const AddressSpaceTracker& spaces) override;
  // Flushes and closes; the first write error, if any.
  absl::Status Finish();
  bool wrote() const { return file_ != nullptr || !status_.ok(); }

 private:
  UserStackUnwinder* inner_;
  std::string path_;
  std::FILE* file_ = nullptr;
  absl::Status status_;
};

// Replays a saved file: each DWARF sample gets the next entry. When the file
// ends early or an entry names another sample, the rest get only their IP
// (truncated) and warning() says why.
class ReplayUnwinder : public UserStackUnwinder {
 public:
  static absl::StatusOr<std::unique_ptr<ReplayUnwinder>> Open(const std::string& path);
  UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                      const AddressSpaceTracker& spaces) override;
  const std::string& warning() const { return warning_; }

 private:
  ReplayUnwinder(base::UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  // Reads exactly `n` bytes; false at the end of the file.
  bool Read(void* out, size_t n);
  void Fail(std::string why);

  base::UniqueFd fd_;
  std::string path_;
  std::string buffer_;
  size_t buffer_pos_ = 0;
  bool failed_ = false;
  std::string warning_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_UNWOUND_STACKS_H_
