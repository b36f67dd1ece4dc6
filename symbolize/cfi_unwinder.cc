#include "symbolize/cfi_unwinder.h"

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace profcpu::symbolize {
namespace {

// enum perf_event_x86_regs (arch/x86/include/uapi/asm/perf_regs.h).
constexpr int kPerfRegBp = 6;
constexpr int kPerfRegSp = 7;
constexpr int kPerfRegIp = 8;
// perf_event_attr.sample_regs_user bits every DWARF register 0..16 needs.
constexpr uint64_t kNeededRegs = 0xff01ffull;

// A return address (or the sampled IP) lies in a mapping of the process.
bool InCode(uint32_t pid, uint64_t ip, const AddressSpaceTracker& spaces) {
  return ip > 0 && spaces.FindMapping(pid, ip - 1).has_value();
}

bool AllInCode(uint32_t pid, const std::vector<uint64_t>& ips, const AddressSpaceTracker& spaces) {
  for (size_t i = 1; i < ips.size(); ++i) {
    if (!InCode(pid, ips[i], spaces)) return false;
  }
  return true;
}

}  // namespace

bool CfiWalk::ReadStack(uint64_t address, uint64_t* word) {
  const absl::string_view stack = copy.stack;
  if (address >= sp && address - sp <= stack.size() &&
      stack.size() - (address - sp) >= sizeof(uint64_t)) {
    std::memcpy(word, stack.data() + (address - sp), sizeof(uint64_t));
    return true;
  }
  if (address >= sp) read_past_stack = true;
  read_failed = true;
  return false;
}

bool CfiWalk::OnFrame(uint64_t pc, uint64_t rsp) {
  if (WantsRsp()) {
    if (rsp == splice_rsp) {
      // This frame's return address came from the slot the kernel read.
      if (pc == splice_return) {
        splice_at = ips.size();
      } else {
        splice_mismatch = true;
      }
      return false;
    }
    // Passed it: BP was no frame record of this stack. The walk goes on by
    // CFI alone (RepairLeaf keeps it if it reaches the thread's start).
    if (rsp > splice_rsp) splice_rsp = 0;
  }
  ips.push_back(pc);
  if (ips.size() >= max_frames) {
    frame_limit = true;
    return false;
  }
  return true;
}

void CfiUnwinder::Warn(std::string warning) {
  if (warned_.insert(warning).second) warnings_.push_back(std::move(warning));
}

void CfiUnwinder::AddWorker(UserStackUnwinder& worker) {
  auto* other = dynamic_cast<CfiUnwinder*>(&worker);
  if (other == nullptr) return;
  std::vector<std::string> warnings;
  other->TakeWarnings(&warnings);
  for (std::string& w : warnings) Warn(std::move(w));
  const DwarfUnwindStats& from = other->stats_;
  stats_.stacks += from.stacks;
  stats_.frames += from.frames;
  stats_.truncated += from.truncated;
  stats_.stack_exhausted += from.stack_exhausted;
  stats_.frame_limit += from.frame_limit;
  stats_.session_resets += from.session_resets;
  LeafRepairStats& leaf = stats_.leaf;
  const LeafRepairStats& add = from.leaf;
  leaf.samples += add.samples;
  leaf.unchanged += add.unchanged;
  leaf.repaired += add.repaired;
  leaf.frames_added += add.frames_added;
  leaf.cfi_whole += add.cfi_whole;
  leaf.cfi_only += add.cfi_only;
  leaf.no_registers += add.no_registers;
  leaf.no_cfi += add.no_cfi;
  leaf.mismatch += add.mismatch;
  leaf.no_splice += add.no_splice;
  leaf.outside_mappings += add.outside_mappings;
  other->stats_ = {};
}

void CfiUnwinder::TakeWarnings(std::vector<std::string>* out) {
  for (std::string& w : warnings_) out->push_back(std::move(w));
  warnings_.clear();
}

UnwoundStack CfiUnwinder::Unwind(const recording::Sample& sample, uint64_t regs_mask,
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
  CfiWalk walk;
  walk.copy = StackCopyOf(sample, regs_mask);
  walk.sp = *sp;
  walk.spaces = &spaces;
  walk.max_frames = max_frames_;
  const WalkEnd end = Walk(&walk);
  if (end == WalkEnd::kNoSession) {
    ++stats_.truncated;
    return {{*ip}, true};
  }
  out.ips = std::move(walk.ips);
  if (out.ips.empty()) out.ips.push_back(*ip);
  // libdw also ends quietly, as at the outermost frame, when a read failed:
  // past the stack copy (it was too short), or below SP (a frame's CFA was
  // wrong, a prologue or epilogue the CFI describes badly): that walk was
  // cut short too. libunwind says so itself; with this test both agree with
  // the outputs' check that the outermost frame is a thread root
  // (docs/unwinders.md).
  out.truncated = end != WalkEnd::kOutermost || walk.read_failed;
  if (out.truncated) {
    ++stats_.truncated;
    if (walk.frame_limit) ++stats_.frame_limit;
    if (walk.read_past_stack) ++stats_.stack_exhausted;
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
UnwoundStack CfiUnwinder::RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
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
  CfiWalk walk;
  walk.copy = copy;
  walk.sp = *sp;
  walk.spaces = &spaces;
  walk.max_frames = max_frames_;
  walk.repair = true;
  // Only a BP above SP can be a frame record the CFI walk meets; any other
  // (a table address, a heap pointer: code without frame pointers keeps
  // data there) is never met, and the walk goes on as far as the copy goes.
  if (chain.size() >= 2 && *bp > *sp) {
    walk.splice_rsp = *bp + 16;
    walk.splice_return = chain[1];
  }
  const WalkEnd end = Walk(&walk);
  if (end == WalkEnd::kNoSession) {
    ++stats.no_cfi;
    return unchanged;
  }
  std::vector<uint64_t>& ips = walk.ips;
  if (walk.splice_at > 0) {
    const size_t k = walk.splice_at;
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
  if (walk.splice_mismatch) {
    ++stats.mismatch;
    return unchanged;
  }
  // The chain was never met: BP held no frame record (code without frame
  // pointers between the leaf and the first frame that keeps one). CFI went
  // on over the copy, through frames that keep frame pointers too (their
  // CFI, or the library's frame-pointer fallback for JIT code). Only a walk
  // that read nothing outside the copy ended at a frame without a caller.
  const bool whole = end == WalkEnd::kOutermost && !walk.read_failed && !walk.frame_limit;
  const bool in_code = ips.size() > 1 && AllInCode(copy.pid, ips, spaces);
  if (whole && in_code) {
    // It reached the thread's first frame: the whole stack, which the
    // kernel's chain (garbage from BP on) never had.
    ++stats.cfi_whole;
    stats.frames_added += ips.size() - 1;
    return {std::move(ips), false};
  }
  if (in_code && (chain.size() == 1 || !InCode(copy.pid, chain[1], spaces))) {
    // The kernel found no frame record (rbp 0, not a stack address, or one
    // whose return address is no code): what CFI recovered is more than it
    // had, if not the whole stack (the copy ended first).
    ++stats.cfi_only;
    stats.frames_added += ips.size() - 1;
    return {std::move(ips), true};
  }
  ++stats.no_splice;
  return unchanged;
}

}  // namespace profcpu::symbolize
