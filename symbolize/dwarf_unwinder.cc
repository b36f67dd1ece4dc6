#include "symbolize/dwarf_unwinder.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <sys/types.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "symbolize/dwfl_sessions.h"

namespace profcpu::symbolize {
namespace {

// DWARF register number of rsp (psABI): a frame's rsp, which on x86-64 is
// its callee's canonical frame address.
constexpr unsigned kDwarfRegSp = 7;

}  // namespace

class DwarfUnwinder::Impl {
 public:
  Impl(const ProcessFiles* files, DwarfUnwinderOptions options, DwflSessions::Warn warn)
      : sessions_(files, {options.max_sessions, std::move(options.debug_roots)},
                  &thread_callbacks_, this, std::move(warn)) {
    thread_callbacks_.next_thread = &Impl::NextThread;
    thread_callbacks_.get_thread = &Impl::GetThread;
    thread_callbacks_.memory_read = &Impl::MemoryRead;
    thread_callbacks_.set_initial_registers = &Impl::SetInitialRegisters;
  }

  // The process's session, checked against its mappings now, then the walk
  // of its one thread (the sample's).
  WalkEnd Walk(CfiWalk* walk, uint64_t* resets) {
    DwflSessions::Session* session = sessions_.Ready(walk->copy.pid, *walk->spaces);
    *resets = sessions_.resets();
    if (session == nullptr) return WalkEnd::kNoSession;
    walk_ = walk;
    session_ = session;
    const int rc = dwfl_getthread_frames(session->dwfl(),
                                         static_cast<pid_t>(walk->copy.tid ? walk->copy.tid : 1),
                                         &Impl::OnFrame, this);
    walk_ = nullptr;
    session_ = nullptr;
    // 0: the walk reached a frame without a return address.
    return rc == 0 ? WalkEnd::kOutermost : WalkEnd::kStopped;
  }

 private:
  // Dwfl_Thread_Callbacks: each session's process has one thread, the
  // sample's, whose registers and memory are the current sample's.
  static pid_t NextThread(Dwfl*, void*, void**) { return 0; }
  static bool GetThread(Dwfl*, pid_t, void* dwfl_arg, void** thread_argp) {
    *thread_argp = dwfl_arg;
    return true;
  }

  static bool MemoryRead(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* dwfl_arg) {
    uint64_t word = 0;
    if (!static_cast<Impl*>(dwfl_arg)->walk_->ReadStack(address, &word)) return false;
    *result = word;
    return true;
  }

  static bool SetInitialRegisters(Dwfl_Thread* thread, void* thread_arg) {
    const CfiWalk& walk = *static_cast<Impl*>(thread_arg)->walk_;
    Dwarf_Word regs[17];
    for (int i = 0; i < 17; ++i) {
      regs[i] = UserRegister(*walk.copy.regs, walk.copy.regs_mask, kPerfRegOfDwarf[i]).value_or(0);
    }
    if (!dwfl_thread_state_registers(thread, 0, 17, regs)) return false;
    dwfl_thread_state_register_pc(thread, regs[16]);
    return true;
  }

  static int OnFrame(Dwfl_Frame* frame, void* arg) {
    Impl* impl = static_cast<Impl*>(arg);
    CfiWalk& walk = *impl->walk_;
    // Not dwfl_frame_pc's `isactivation`: asking for it unwinds this frame at
    // once, before the module its code is in could be reported.
    Dwarf_Addr pc;
    if (!dwfl_frame_pc(frame, &pc, nullptr)) return DWARF_CB_ABORT;
    const bool first = walk.ips.empty();
    Dwarf_Word rsp = 0;
    if (walk.WantsRsp() && dwfl_frame_reg(frame, kDwarfRegSp, &rsp) != 0) return DWARF_CB_ABORT;
    if (!walk.OnFrame(pc, rsp)) return DWARF_CB_ABORT;
    // libdw unwinds a caller's frame from its call instruction (pc - 1).
    impl->sessions_.Report(impl->session_, *walk.spaces, first || pc == 0 ? pc : pc - 1);
    return DWARF_CB_OK;
  }

  Dwfl_Thread_Callbacks thread_callbacks_ = {};
  CfiWalk* walk_ = nullptr;  // the walk under way
  DwflSessions::Session* session_ = nullptr;
  // Declared last: its sessions point at the members above (the thread
  // callbacks) and end first.
  DwflSessions sessions_;
};

DwarfUnwinder::DwarfUnwinder(const ProcessFiles* files, DwarfUnwinderOptions options)
    : CfiUnwinder(options.max_frames), files_(files), options_(std::move(options)) {
  impl_ = std::make_unique<Impl>(files, options_, [this](std::string w) { Warn(std::move(w)); });
}
DwarfUnwinder::~DwarfUnwinder() = default;

std::unique_ptr<UserStackUnwinder> DwarfUnwinder::NewWorker(size_t workers) {
  DwarfUnwinderOptions options = options_;
  options.max_sessions = std::max<size_t>(4, options_.max_sessions / std::max<size_t>(workers, 1));
  return std::make_unique<DwarfUnwinder>(files_, std::move(options));
}

CfiUnwinder::WalkEnd DwarfUnwinder::Walk(CfiWalk* walk) {
  return impl_->Walk(walk, &mutable_stats().session_resets);
}

}  // namespace profcpu::symbolize
