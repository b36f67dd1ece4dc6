#include "fold/dotnet_osr_replay.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "symbolize/dotnet_tier.h"

namespace profcpu::fold {
namespace {

// PERF_REG_X86_BP and _SP (asm/perf_regs.h): the repair's starting frame.
constexpr int kPerfRegBp = 6;
constexpr int kPerfRegSp = 7;

// The runtime's perf-map and jitdump names end with it (dotnet_tier.h).
constexpr absl::string_view kOsrTier = "OptimizedTier1OSR";
constexpr absl::string_view kOsrSuffix = "[OptimizedTier1OSR]";

}  // namespace

void DotnetOsrReplay::OnMmap(const recording::Mmap& mmap) {
  // JitSources reloads a process's files when its jitdump is mapped.
  if (absl::EndsWith(mmap.filename, ".dump")) has_osr_.erase(mmap.pid);
}

bool DotnetOsrReplay::ProcessHasOsrCode(uint32_t pid) {
  auto [it, inserted] = has_osr_.try_emplace(pid, false);
  if (inserted) it->second = jit_->NamesAnyCode(pid, kOsrSuffix);
  return it->second;
}

bool DotnetOsrReplay::IsOsrCode(uint32_t pid, uint64_t address, uint64_t time_ns,
                                const symbolize::AddressSpaceTracker& spaces) {
  const symbolize::NormalizedAddress normalized = spaces.Normalize(pid, address, false);
  // Only per-process code (JIT, .NET images) has runtime names; a process
  // without any (native code only) is not even asked about its JIT files.
  if (normalized.location.kind != symbolize::CodeKind::kProcess) return false;
  if (!ProcessHasOsrCode(pid)) return false;
  const uint64_t value = normalized.location.value;
  const uint32_t generation = jit_->Generation(pid, value, time_ns);
  auto [it, inserted] = osr_code_.try_emplace(CodeKey{pid, value, generation}, false);
  if (inserted) it->second = symbolize::TierOf(jit_->CodeName(pid, value, generation)) == kOsrTier;
  return it->second;
}

bool DotnetOsrReplay::FlagOsrFrames(uint32_t pid, uint64_t time_ns,
                                    const std::vector<uint64_t>& chain,
                                    const symbolize::AddressSpaceTracker& spaces) {
  chain_flags_.assign(chain.size(), false);
  if (jit_ == nullptr) return false;
  // A process already known to run no OSR code (most JIT runtimes' processes):
  // no frame of it needs looking up.
  if (auto known = has_osr_.find(pid); known != has_osr_.end() && !known->second) return false;
  bool any = false;
  for (size_t i = 0; i < chain.size(); ++i) {
    // Return addresses are looked up inside their call, as fold names them.
    const uint64_t adjust = (i > 0 && chain[i] > 0) ? 1 : 0;
    chain_flags_[i] = IsOsrCode(pid, chain[i] - adjust, time_ns, spaces);
    any = any || chain_flags_[i];
  }
  return any;
}

const std::vector<uint64_t>& DotnetOsrReplay::Repair(const symbolize::UserStackCopy& copy,
                                                     const std::vector<uint64_t>& chain,
                                                     uint64_t time_ns,
                                                     const symbolize::AddressSpaceTracker& spaces,
                                                     DotnetOsrCounts* counts) {
  if (copy.regs_abi == 0 || copy.regs == nullptr) return chain;
  if (!FlagOsrFrames(copy.pid, time_ns, chain, spaces)) return chain;
  symbolize::OsrRepairCounts& process = counts->by_pid[copy.pid];
  const std::optional<uint64_t> sp = symbolize::UserRegister(*copy.regs, copy.regs_mask, kPerfRegSp);
  const std::optional<uint64_t> bp = symbolize::UserRegister(*copy.regs, copy.regs_mask, kPerfRegBp);
  if (!sp.has_value() || !bp.has_value()) {
    ++process.samples_in_osr;  // no way to look: the frame stays without its caller
    ++process.by_outcome[static_cast<size_t>(symbolize::OsrRepairOutcome::kFrameOutsideCopy)];
    return chain;
  }
  auto is_osr_code = [&](uint64_t address) {
    // The chain's own elements were flagged above; a caller put back is new.
    auto at = std::find(chain.begin(), chain.end(), address);
    if (at != chain.end()) return static_cast<bool>(chain_flags_[at - chain.begin()]);
    return IsOsrCode(copy.pid, address - 1, time_ns, spaces);
  };
  auto is_code = [&](uint64_t address) {
    // Perf records executable mappings only: any mapping holds code.
    return spaces.Normalize(copy.pid, address - 1, false).mapping_end != 0;
  };
  symbolize::OsrRepairResult result =
      symbolize::RepairDotnetOsrChain(chain, *sp, *bp, copy.stack, {is_osr_code, is_code});
  process.Add(result);
  counts->max_copy_bytes_used = std::max(counts->max_copy_bytes_used, result.bytes_used);
  if (result.repaired == 0) return chain;
  repaired_ = std::move(result.chain);
  return repaired_;
}

void DotnetOsrReplay::Count(uint32_t pid, uint64_t time_ns, const std::vector<uint64_t>& chain,
                            const symbolize::AddressSpaceTracker& spaces, DotnetOsrCounts* counts) {
  if (FlagOsrFrames(pid, time_ns, chain, spaces)) ++counts->by_pid[pid].samples_in_osr;
}

void LogDotnetOsr(const DotnetOsrCounts& counts, bool stack_copies, base::RunLog* log) {
  for (const auto& [pid, process] : counts.by_pid) {
    if (stack_copies) {
      std::string outcomes;
      for (size_t i = 1; i < process.by_outcome.size(); ++i) {
        if (process.by_outcome[i] == 0) continue;
        absl::StrAppend(&outcomes, outcomes.empty() ? "" : ", ",
                        symbolize::OsrRepairOutcomeName(static_cast<symbolize::OsrRepairOutcome>(i)),
                        " ", process.by_outcome[i]);
      }
      log->Info(absl::StrCat("pid ", pid, ": ", process.samples_in_osr,
                             " stacks through .NET OSR code (their caller repaired from the stack "
                             "copy): ", outcomes));
      const uint64_t too_short =
          process.by_outcome[static_cast<size_t>(symbolize::OsrRepairOutcome::kCopyTooShort)];
      if (too_short * 100 > process.samples_in_osr) {
        log->Info(absl::StrCat("pid ", pid, ": ", too_short, " stack copies ended before the "
                               "Tier0 frame record: -callgraph fp+cfi,1024 copies more"));
      }
    }
    const std::string warning = symbolize::OsrWarning(pid, process, stack_copies);
    if (!warning.empty()) log->Warn(warning);
  }
  if (counts.max_copy_bytes_used > 0) {
    log->Info(absl::StrCat("OSR repairs read at most ", counts.max_copy_bytes_used,
                           " bytes of stack copy"));
  }
}

}  // namespace profcpu::fold
