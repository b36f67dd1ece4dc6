// unwound_stacks.bin: the user call chains the DWARF unwinder computed for a
// recording's -callgraph dwarf samples, and the frames its leaf repair put
// back into -callgraph fp+cfi chains, kept in the run folder (and archive)
// so that postprocess, on a machine without the target's files, replays the
// very same chains instead of unwinding again.
//
// Format, version 1 (little-endian):
//   magic    8 bytes "PCUNWND1"
//   entries  until the end, one per DWARF sample, or per fp+cfi sample and
//            off-CPU stay with a stack copy, in recording order:
//              u64 time_ns, u32 tid, u8 flags, u32 n (at most 4096),
//              n x u64 ips (leaf first)
//            flags: bit 0 truncated; bit 1 a leaf repair, whose ips are the
//            frames inserted after the chain's leaf (none: the chain was
//            whole); bit 2 (with bit 1) the ips replace the chain.
// (Leaf-repair entries were added without a new magic: files from before
// never hold them, and an older reader refuses the flags as corrupt.)
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
#include "absl/types/span.h"
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
  UnwoundStack RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                          const AddressSpaceTracker& spaces) override;
  // The parallel replay: workers of `inner`'s, whose answers are saved here
  // as they come back in recording order.
  std::unique_ptr<UserStackUnwinder> NewWorker(size_t workers) override;
  void TookUnwind(uint64_t time_ns, uint32_t tid, const UnwoundStack& answer) override;
  void TookRepair(uint64_t time_ns, uint32_t tid, const std::vector<uint64_t>& chain,
                  const UnwoundStack& answer) override;
  void AddWorker(UserStackUnwinder& worker) override;
  // Flushes and closes; the first write error, if any.
  absl::Status Finish();
  bool wrote() const { return file_ != nullptr || !status_.ok(); }

 private:
  void Save(uint64_t time_ns, uint32_t tid, uint8_t flags, absl::Span<const uint64_t> ips);

  UserStackUnwinder* inner_;
  std::string path_;
  std::FILE* file_ = nullptr;
  absl::Status status_;
};

// Replays a saved file: each DWARF sample or leaf repair gets the next
// entry. When the file ends early or an entry names another sample, the rest
// get only their IP (DWARF, truncated) or their chain as it was (fp+cfi),
// and warning() says why.
class ReplayUnwinder : public UserStackUnwinder {
 public:
  static absl::StatusOr<std::unique_ptr<ReplayUnwinder>> Open(const std::string& path);
  UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                      const AddressSpaceTracker& spaces) override;
  UnwoundStack RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                          const AddressSpaceTracker& spaces) override;
  const std::string& warning() const { return warning_; }

 private:
  ReplayUnwinder(base::UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  // Reads exactly `n` bytes; false at the end of the file.
  bool Read(void* out, size_t n);
  void Fail(std::string why);
  // The next entry, if it is for this record and of this kind; else Fail.
  bool Next(uint64_t time_ns, uint32_t tid, bool leaf_repair, UnwoundStack* out, uint8_t* flags);

  base::UniqueFd fd_;
  std::string path_;
  std::string buffer_;
  size_t buffer_pos_ = 0;
  bool failed_ = false;
  std::string warning_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_UNWOUND_STACKS_H_
