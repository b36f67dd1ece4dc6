// What the two CFI unwinders (dwarf_unwinder.h: elfutils libdwfl;
// libunwind_unwinder.h: libunwind) share: the checks of a sample's registers,
// the walk's state over the copied stack (its memory, the frames found, why
// it ended), and how a walk becomes a -callgraph dwarf stack (Unwind) or a
// repaired fp+cfi chain (RepairLeaf). Each library only steps frames
// (CfiUnwinder::Walk), so both give the same answers from the same frames
// and bench/unwinders.sh compares the libraries, not two policies.
#ifndef PROFCPU_SYMBOLIZE_CFI_UNWINDER_H_
#define PROFCPU_SYMBOLIZE_CFI_UNWINDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "symbolize/debug_file_finder.h"
#include "symbolize/stack_unwinder.h"

namespace profcpu::symbolize {

struct DwarfUnwinderOptions {
  size_t max_frames = 512;
  size_t max_sessions = 16;  // processes with an open unwinding session at once
  // Where separate debug files (for .debug_frame) are looked for besides
  // each process's root.
  std::vector<DebugSearchRoot> debug_roots;
};

// What -callgraph fp+cfi leaf repairs did (RepairLeaf).
struct LeafRepairStats {
  uint64_t samples = 0;
  uint64_t unchanged = 0;     // the leaf had its frame: the chain was whole
  uint64_t repaired = 0;      // callers put back
  uint64_t frames_added = 0;
  uint64_t cfi_whole = 0;     // the chain never met: CFI frames to the thread's start instead
  uint64_t cfi_only = 0;      // no frame-pointer chain: CFI frames instead (marked truncated)
  uint64_t no_registers = 0;  // of those left as they were: no user registers (kernel thread)
  uint64_t no_cfi = 0;        // no unwinding session for the process
  uint64_t mismatch = 0;      // CFI reached the chain's slot with another return address
  uint64_t no_splice = 0;     // CFI never reached the chain (no CFI, copy too short, rbp not a frame)
  uint64_t outside_mappings = 0;  // a recovered frame was not code of the process
};

struct DwarfUnwindStats {
  uint64_t stacks = 0;
  uint64_t frames = 0;
  uint64_t truncated = 0;
  uint64_t stack_exhausted = 0;  // of the truncated: a read past the stack copy
  uint64_t frame_limit = 0;      // of the truncated: max_frames reached
  uint64_t session_resets = 0;   // a mapping changed under a session
  LeafRepairStats leaf;
};

// One walk over a sample's copied stack, as the library's callbacks see it.
struct CfiWalk {
  UserStackCopy copy;
  uint64_t sp = 0;
  const AddressSpaceTracker* spaces = nullptr;
  std::vector<uint64_t> ips;  // leaf first
  bool read_past_stack = false;
  bool read_failed = false;  // any read outside the copy (below SP too: a wild CFA)
  bool frame_limit = false;
  size_t max_frames = 512;
  // A leaf repair: stop at the frame whose rsp is splice_rsp (0: no chain
  // to meet) and check it returns to splice_return.
  bool repair = false;
  uint64_t splice_rsp = 0;
  uint64_t splice_return = 0;
  size_t splice_at = 0;  // the frame where the chain was met; 0: not met
  bool splice_mismatch = false;

  // The stack word at `address`, from the copy [sp, sp + size): nothing
  // else of the process was recorded. False outside it (noted: a read past
  // the copy is where a walk stops when the copy was too short).
  bool ReadStack(uint64_t address, uint64_t* word);
  // Whether OnFrame needs the frame's rsp (a leaf repair looking for the
  // kernel's chain); reading it may cost the library an extra step.
  bool WantsRsp() const { return repair && !ips.empty() && splice_rsp != 0; }
  // A frame reached: its pc (the sampled IP, then return addresses) and,
  // when WantsRsp(), its rsp (the callee's canonical frame address). False:
  // the walk is over (the chain met, or the frame limit).
  bool OnFrame(uint64_t pc, uint64_t rsp);
};

class CfiUnwinder : public UserStackUnwinder {
 public:
  explicit CfiUnwinder(size_t max_frames) : max_frames_(max_frames) {}

  UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                      const AddressSpaceTracker& spaces) final;
  UnwoundStack RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                          const AddressSpaceTracker& spaces) final;

  // A worker's (NewWorker's) stats and warnings into this one's.
  void AddWorker(UserStackUnwinder& worker) override;

  const DwarfUnwindStats& stats() const { return stats_; }
  // Problems found since the last call, each once (unreadable files, no
  // x86-64 registers in the recording, ...).
  void TakeWarnings(std::vector<std::string>* out);

 protected:
  enum class WalkEnd {
    kNoSession,  // nothing can unwind this process (no files, the library refused)
    kOutermost,  // reached a frame without a caller (CFI marks _start and thread starts so)
    kStopped,    // anything else: OnFrame said stop, a read failed, no CFI for a frame
  };
  // Steps `walk`'s frames from its registers, calling walk->OnFrame for
  // each (the first is the sampled IP) until it returns false or the
  // library can go no further. Memory is walk->ReadStack.
  virtual WalkEnd Walk(CfiWalk* walk) = 0;
  void Warn(std::string warning);
  DwarfUnwindStats& mutable_stats() { return stats_; }

 private:
  const size_t max_frames_;
  DwarfUnwindStats stats_;
  absl::flat_hash_set<std::string> warned_;
  std::vector<std::string> warnings_;
};

// The perf register holding each x86-64 DWARF register 0..16 (System V
// x86-64 psABI, "DWARF Register Number Mapping": rax rdx rcx rbx rsi rdi rbp
// rsp r8..r15, then 16 the return address, i.e. rip). libunwind numbers its
// x86-64 registers the same way.
inline constexpr int kPerfRegOfDwarf[17] = {0,  3,  2,  1,  4,  5,  6,  7, 16,
                                            17, 18, 19, 20, 21, 22, 23, 8};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_CFI_UNWINDER_H_
