#include "symbolize/dwarf_unwinder.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <sys/types.h>

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "symbolize/dwfl_sessions.h"

namespace profcpu::symbolize {
namespace {

// enum perf_event_x86_regs (arch/x86/include/uapi/asm/perf_regs.h).
constexpr int kPerfRegBp = 6;
constexpr int kPerfRegSp = 7;
constexpr int kPerfRegIp = 8;
// DWARF register number of rsp (psABI): a frame's rsp, which on x86-64 is
// its callee's canonical frame address.
constexpr unsigned kDwarfRegSp = 7;
// The perf register holding each x86-64 DWARF register 0..16 (System V
// x86-64 psABI, "DWARF Register Number Mapping": rax rdx rcx rbx rsi rdi rbp
// rsp r8..r15, then 16 the return address, i.e. rip).
constexpr int kPerfRegOfDwarf[17] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};
// perf_event_attr.sample_regs_user bits every DWARF register above needs.
constexpr uint64_t kNeededRegs = 0xff01ffull;

}  // namespace

class DwarfUnwinder::Impl {
 public:
  Impl(const ProcessFiles* files, DwarfUnwinderOptions options)
      : max_frames_(options.max_frames),
        sessions_(files, {options.max_sessions, std::move(options.debug_roots)},
                  &thread_callbacks_, this, [this](std::string w) { Warn(std::move(w)); }) {
    thread_callbacks_.next_thread = &Impl::NextThread;
    thread_callbacks_.get_thread = &Impl::GetThread;
    thread_callbacks_.memory_read = &Impl::MemoryRead;
    thread_callbacks_.set_initial_registers = &Impl::SetInitialRegisters;
  }

  UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                      const AddressSpaceTracker& spaces) {
    UnwoundStack out;
    if (sample.user_regs_abi == 0 || sample.user_regs.empty()) return out;  // a kernel thread
    ++stats_.stacks;
    std::optional<uint64_t> ip = UserRegister(sample, regs_mask, kPerfRegIp);
    std::optional<uint64_t> sp = UserRegister(sample, regs_mask, kPerfRegSp);
    if (!ip.has_value() || !sp.has_value()) {
      Warn("DWARF samples lack the instruction or stack pointer register; nothing to unwind");
      ++stats_.truncated;
      out.truncated = true;
      return out;
    }
    if ((regs_mask & kNeededRegs) != kNeededRegs) {
      Warn(absl::StrCat("DWARF samples carry registers 0x", absl::Hex(regs_mask),
                        " (x86-64 needs 0x", absl::Hex(kNeededRegs), "); unwinds may stop early"));
    }
    DwflSessions::Session* session = ReadySession(sample.pid, spaces);
    if (session == nullptr) {
      ++stats_.truncated;
      return {{*ip}, true};
    }
    current_ = Current{};
    current_.copy = StackCopyOf(sample, regs_mask);
    current_.sp = *sp;
    current_.spaces = &spaces;
    current_.session = session;
    int rc = dwfl_getthread_frames(session->dwfl(), static_cast<pid_t>(sample.tid ? sample.tid : 1),
                                   &Impl::OnFrame, this);
    out.ips = std::move(current_.ips);
    if (out.ips.empty()) out.ips.push_back(*ip);
    // 0: the walk reached a frame without a return address (CFI marks
    // _start and thread starts so). libdw also ends quietly when a frame's
    // return address could not be read, which here means it lay past the
    // stack copy: that walk was cut short too.
    out.truncated = rc != 0 || current_.read_past_stack;
    if (out.truncated) {
      ++stats_.truncated;
      if (current_.frame_limit) ++stats_.frame_limit;
      if (current_.read_past_stack) ++stats_.stack_exhausted;
    }
    stats_.frames += out.ips.size();
    return out;
  }

  // See UserStackUnwinder::RepairLeaf. The kernel's chain is chain[0] = ip,
  // then the return addresses of the frame records from the sampled rbp (b0)
  // on: chain[1] was read from b0 + 8. Unwinding the leaf by CFI from the
  // copy, the first frame k whose rsp is b0 + 16 got its return address from
  // that same slot, so ips[0..k) are the frames the chain lacks, and the
  // chain goes on from chain[1]: nothing is duplicated or dropped.
  UnwoundStack RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                          const AddressSpaceTracker& spaces) {
    LeafRepairStats& stats = stats_.leaf;
    ++stats.samples;
    UnwoundStack unchanged{chain, false};
    if (chain.empty() || copy.regs_abi == 0 || copy.regs == nullptr) {
      ++stats.no_registers;
      return unchanged;
    }
    std::optional<uint64_t> ip = UserRegister(*copy.regs, copy.regs_mask, kPerfRegIp);
    std::optional<uint64_t> sp = UserRegister(*copy.regs, copy.regs_mask, kPerfRegSp);
    std::optional<uint64_t> bp = UserRegister(*copy.regs, copy.regs_mask, kPerfRegBp);
    if (!ip.has_value() || !sp.has_value() || !bp.has_value() || *ip != chain[0]) {
      ++stats.no_registers;
      return unchanged;
    }
    DwflSessions::Session* session = ReadySession(copy.pid, spaces);
    if (session == nullptr) {
      ++stats.no_cfi;
      return unchanged;
    }
    current_ = Current{};
    current_.copy = copy;
    current_.sp = *sp;
    current_.spaces = &spaces;
    current_.session = session;
    current_.repair = true;
    // Only a BP above SP can be a frame record the CFI walk meets; any other
    // (a table address, a heap pointer: code without frame pointers keeps
    // data there) is never met, and the walk goes on as far as the copy goes.
    if (chain.size() >= 2 && *bp > *sp) {
      current_.splice_rsp = *bp + 16;
      current_.splice_return = chain[1];
    }
    const int rc = dwfl_getthread_frames(session->dwfl(), static_cast<pid_t>(copy.tid ? copy.tid : 1),
                                         &Impl::OnFrame, this);
    std::vector<uint64_t>& ips = current_.ips;
    if (current_.splice_at > 0) {
      const size_t k = current_.splice_at;
      if (k == 1) {
        ++stats.unchanged;
        return unchanged;
      }
      // Never invent a frame: each one recovered must be code of the process.
      for (size_t i = 1; i < k; ++i) {
        if (!spaces.FindMapping(copy.pid, ips[i] - 1).has_value()) {
          ++stats.outside_mappings;
          return unchanged;
        }
      }
      UnwoundStack out;
      out.ips.assign(ips.begin(), ips.begin() + static_cast<std::ptrdiff_t>(k));
      out.ips.insert(out.ips.end(), chain.begin() + 1, chain.end());
      ++stats.repaired;
      stats.frames_added += k - 1;
      return out;
    }
    if (current_.splice_mismatch) {
      ++stats.mismatch;
      return unchanged;
    }
    // The chain was never met: BP held no frame record (code without frame
    // pointers between the leaf and the first frame that keeps one). CFI
    // went on over the copy, through frames that keep frame pointers too
    // (their CFI, or libdw's frame-pointer fallback for JIT code).
    // libdw ends quietly when a return address cannot be read: only a walk
    // that read nothing outside the copy ended at a frame without a caller.
    const bool whole = rc == 0 && !current_.read_failed && !current_.frame_limit;
    const bool in_code = ips.size() > 1 && AllInCode(copy.pid, ips, spaces);
    if (whole && in_code) {
      // It reached the thread's first frame: the whole stack, which the
      // kernel's chain (garbage from BP on) never had.
      ++stats.cfi_whole;
      stats.frames_added += ips.size() - 1;
      return {std::move(ips), false};
    }
    if (in_code && (chain.size() == 1 || !InCode(copy.pid, chain[1], spaces))) {
      // The kernel found no frame record (rbp 0, not a stack address, or
      // one whose return address is no code): what CFI recovered is more
      // than it had, if not the whole stack (the copy ended first).
      ++stats.cfi_only;
      stats.frames_added += ips.size() - 1;
      return {std::move(ips), true};
    }
    ++stats.no_splice;
    return unchanged;
  }

  const DwarfUnwindStats& stats() const { return stats_; }
  void TakeWarnings(std::vector<std::string>* out) {
    for (std::string& w : warnings_) out->push_back(std::move(w));
    warnings_.clear();
  }

 private:
  // The sample being unwound, as the callbacks see it.
  struct Current {
    UserStackCopy copy;
    uint64_t sp = 0;
    const AddressSpaceTracker* spaces = nullptr;
    DwflSessions::Session* session = nullptr;
    std::vector<uint64_t> ips;
    bool read_past_stack = false;
    bool read_failed = false;  // any read outside the copy (below SP too: a wild CFA)
    bool frame_limit = false;
    size_t max_frames = 0;  // 0: the options' max_frames
    // A leaf repair: stop at the frame whose rsp is splice_rsp (0: no
    // chain to meet) and check it returns to splice_return.
    bool repair = false;
    uint64_t splice_rsp = 0;
    uint64_t splice_return = 0;
    size_t splice_at = 0;  // the frame where the chain was met; 0: not met
    bool splice_mismatch = false;
  };

  // A return address (or the sampled IP) lies in a mapping of the process.
  static bool InCode(uint32_t pid, uint64_t ip, const AddressSpaceTracker& spaces) {
    return ip > 0 && spaces.FindMapping(pid, ip - 1).has_value();
  }
  static bool AllInCode(uint32_t pid, const std::vector<uint64_t>& ips,
                        const AddressSpaceTracker& spaces) {
    for (size_t i = 1; i < ips.size(); ++i) {
      if (!InCode(pid, ips[i], spaces)) return false;
    }
    return true;
  }

  void Warn(std::string warning) {
    if (warned_.insert(warning).second) warnings_.push_back(std::move(warning));
  }

  // The process's session, checked against its mappings now; null when
  // libdwfl cannot unwind for it.
  DwflSessions::Session* ReadySession(uint32_t pid, const AddressSpaceTracker& spaces) {
    DwflSessions::Session* session = sessions_.Ready(pid, spaces);
    stats_.session_resets = sessions_.resets();
    return session;
  }

  // Dwfl_Thread_Callbacks: each session's process has one thread, the
  // sample's, whose registers and memory are the current sample's.
  static pid_t NextThread(Dwfl*, void*, void**) { return 0; }
  static bool GetThread(Dwfl*, pid_t, void* dwfl_arg, void** thread_argp) {
    *thread_argp = dwfl_arg;
    return true;
  }

  // Memory is the sample's stack copy, [sp, sp + size): nothing else of the
  // process was recorded.
  static bool MemoryRead(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* dwfl_arg) {
    Current& c = static_cast<Impl*>(dwfl_arg)->current_;
    const absl::string_view stack = c.copy.stack;
    if (address >= c.sp && address - c.sp <= stack.size() &&
        stack.size() - (address - c.sp) >= sizeof(Dwarf_Word)) {
      std::memcpy(result, stack.data() + (address - c.sp), sizeof(Dwarf_Word));
      return true;
    }
    if (address >= c.sp) c.read_past_stack = true;
    c.read_failed = true;
    return false;
  }

  static bool SetInitialRegisters(Dwfl_Thread* thread, void* thread_arg) {
    Current& c = static_cast<Impl*>(thread_arg)->current_;
    Dwarf_Word regs[17];
    for (int i = 0; i < 17; ++i) {
      regs[i] = UserRegister(*c.copy.regs, c.copy.regs_mask, kPerfRegOfDwarf[i]).value_or(0);
    }
    if (!dwfl_thread_state_registers(thread, 0, 17, regs)) return false;
    dwfl_thread_state_register_pc(thread, regs[16]);
    return true;
  }

  static int OnFrame(Dwfl_Frame* frame, void* arg) {
    Impl* impl = static_cast<Impl*>(arg);
    Current& c = impl->current_;
    // Not dwfl_frame_pc's `isactivation`: asking for it unwinds this frame at
    // once, before the module its code is in could be reported.
    Dwarf_Addr pc;
    if (!dwfl_frame_pc(frame, &pc, nullptr)) return DWARF_CB_ABORT;
    const bool first = c.ips.empty();
    if (c.repair && !first && c.splice_rsp != 0) {
      Dwarf_Word rsp = 0;
      if (dwfl_frame_reg(frame, kDwarfRegSp, &rsp) != 0) return DWARF_CB_ABORT;
      if (rsp == c.splice_rsp) {
        // This frame's return address came from the slot the kernel read.
        if (pc == c.splice_return) {
          c.splice_at = c.ips.size();
        } else {
          c.splice_mismatch = true;
        }
        return DWARF_CB_ABORT;
      }
      // Passed it: BP was no frame record of this stack. The walk goes on
      // by CFI alone (RepairLeaf keeps it if it reaches the thread's start).
      if (rsp > c.splice_rsp) c.splice_rsp = 0;
    }
    c.ips.push_back(pc);
    const size_t max_frames = c.max_frames > 0 ? c.max_frames : impl->max_frames_;
    if (c.ips.size() >= max_frames) {
      c.frame_limit = true;
      return DWARF_CB_ABORT;
    }
    // libdw unwinds a caller's frame from its call instruction (pc - 1).
    impl->sessions_.Report(c.session, *c.spaces, first || pc == 0 ? pc : pc - 1);
    return DWARF_CB_OK;
  }

  const size_t max_frames_;
  Dwfl_Thread_Callbacks thread_callbacks_ = {};
  Current current_;
  DwarfUnwindStats stats_;
  absl::flat_hash_set<std::string> warned_;
  std::vector<std::string> warnings_;
  // Declared last: its sessions point at the members above (the thread
  // callbacks, warnings) and end first.
  DwflSessions sessions_;
};

DwarfUnwinder::DwarfUnwinder(const ProcessFiles* files, DwarfUnwinderOptions options)
    : impl_(std::make_unique<Impl>(files, std::move(options))) {}
DwarfUnwinder::~DwarfUnwinder() = default;

UnwoundStack DwarfUnwinder::Unwind(const recording::Sample& sample, uint64_t regs_mask,
                                   const AddressSpaceTracker& spaces) {
  return impl_->Unwind(sample, regs_mask, spaces);
}
UnwoundStack DwarfUnwinder::RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                                       const AddressSpaceTracker& spaces) {
  return impl_->RepairLeaf(copy, chain, spaces);
}
const DwarfUnwindStats& DwarfUnwinder::stats() const { return impl_->stats(); }
void DwarfUnwinder::TakeWarnings(std::vector<std::string>* out) { impl_->TakeWarnings(out); }

}  // namespace profcpu::symbolize
