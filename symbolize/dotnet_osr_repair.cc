#include "symbolize/dotnet_osr_repair.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace profcpu::symbolize {
namespace {

// The sample's stack copy: the bytes from sp up.
class OsrStackCopy {
 public:
  OsrStackCopy(uint64_t sp, absl::string_view bytes) : sp_(sp), bytes_(bytes) {}

  // The 8 bytes at `address`, if the copy holds all of them.
  bool Read(uint64_t address, uint64_t* value) const {
    if (address < sp_) return false;
    const uint64_t offset = address - sp_;
    if (offset > bytes_.size() || bytes_.size() - offset < 8) return false;
    std::memcpy(value, bytes_.data() + offset, 8);
    return true;
  }

 private:
  uint64_t sp_;
  absl::string_view bytes_;
};

// One frame record of the frame-pointer walk from bp: at `fp`, the caller's
// frame pointer and the return address into the caller.
struct OsrFrameRecord {
  uint64_t fp;
  uint64_t saved_fp;
  uint64_t return_address;
};

}  // namespace

const char* OsrRepairOutcomeName(OsrRepairOutcome outcome) {
  switch (outcome) {
    case OsrRepairOutcome::kNoOsrFrame: return "no_osr_frame";
    case OsrRepairOutcome::kRepaired: return "repaired";
    case OsrRepairOutcome::kChainMismatch: return "chain_mismatch";
    case OsrRepairOutcome::kFrameOutsideCopy: return "frame_outside_copy";
    case OsrRepairOutcome::kCopyTooShort: return "copy_too_short";
    case OsrRepairOutcome::kNoTier0Record: return "no_tier0_record";
    case OsrRepairOutcome::kAmbiguous: return "ambiguous";
  }
  return "unknown";
}

OsrRepairResult RepairDotnetOsrChain(absl::Span<const uint64_t> chain, uint64_t sp, uint64_t bp,
                                     absl::string_view stack, const OsrCode& code) {
  OsrRepairResult result;
  result.chain.assign(chain.begin(), chain.end());
  if (std::none_of(chain.begin(), chain.end(), [&](uint64_t a) { return code.is_osr_code(a); })) {
    return result;
  }
  const OsrStackCopy copy(sp, stack);

  // The frame-pointer walk in the copy, as far as the copy and a rising
  // chain of frame pointers go (a walk cannot be longer than the chain).
  std::vector<OsrFrameRecord> records;
  for (uint64_t fp = bp; records.size() < chain.size() + 1;) {
    OsrFrameRecord record{fp, 0, 0};
    if (!copy.Read(fp, &record.saved_fp) || !copy.Read(fp + 8, &record.return_address)) break;
    records.push_back(record);
    if (record.saved_fp <= fp) break;
    fp = record.saved_fp;
  }

  // Where the walk's first return address ([bp+8]) sits in the chain: at 1,
  // or later when a leaf repair put frames before it.
  int lead = -1;
  if (!records.empty()) {
    if (chain.size() == 1) {
      lead = 0;  // the kernel's walk gave nothing more; the leaf's frame is bp's
    } else {
      for (int d = 0; d <= kMaxLeadingFrames && 1 + d < static_cast<int>(chain.size()); ++d) {
        if (chain[1 + d] == records[0].return_address) {
          lead = d;
          break;
        }
      }
    }
  }

  auto fail = [&](OsrRepairOutcome outcome) {
    result.outcome = outcome;
    return result;
  };
  for (size_t k = 0; k < result.chain.size(); ++k) {
    if (!code.is_osr_code(result.chain[k])) continue;
    if (lead < 0) {
      return fail(records.empty() ? OsrRepairOutcome::kFrameOutsideCopy
                                  : OsrRepairOutcome::kChainMismatch);
    }
    // Element k's frame is the walk's record m: chain[1 + lead + i] is the
    // return address of record i, so chain[k + 1] (the Tier0 word, for an
    // OSR frame) is record m's.
    const int64_t m = static_cast<int64_t>(k) - lead;
    if (m < 0) return fail(OsrRepairOutcome::kChainMismatch);
    if (m >= static_cast<int64_t>(records.size())) return fail(OsrRepairOutcome::kFrameOutsideCopy);
    for (int64_t i = 0; i <= m; ++i) {
      const size_t at = 1 + lead + i;
      if (at < chain.size() && chain[at] != records[i].return_address) {
        return fail(OsrRepairOutcome::kChainMismatch);
      }
    }
    const OsrFrameRecord& osr = records[m];
    // The Tier0 frame holds the OSR frame and lies below the caller's frame:
    // search (fp + 16, caller's fp - 16], or to the copy's end when the
    // caller's frame pointer is not above this one.
    const bool bounded = osr.saved_fp > osr.fp;
    int found = 0;
    uint64_t record_at = 0;
    uint64_t caller_return = 0;
    bool copy_ended = false;
    for (uint64_t s = osr.fp + 16; !bounded || s + 16 <= osr.saved_fp; s += 8) {
      uint64_t saved = 0;
      uint64_t ret = 0;
      if (!copy.Read(s, &saved) || !copy.Read(s + 8, &ret)) {
        copy_ended = true;
        break;
      }
      if (saved != osr.saved_fp || ret == osr.return_address || !code.is_code(ret)) continue;
      if (++found > 1) return fail(OsrRepairOutcome::kAmbiguous);
      record_at = s;
      caller_return = ret;
    }
    if (found == 0) {
      return fail(copy_ended ? OsrRepairOutcome::kCopyTooShort : OsrRepairOutcome::kNoTier0Record);
    }
    if (k + 1 < result.chain.size()) {
      result.chain[k + 1] = caller_return;
    } else {
      result.chain.push_back(caller_return);
    }
    ++result.repaired;
    result.bytes_used = std::max(result.bytes_used, record_at + 16 - sp);
  }
  result.outcome = OsrRepairOutcome::kRepaired;
  return result;
}

void OsrRepairCounts::Add(const OsrRepairResult& result) {
  if (result.outcome == OsrRepairOutcome::kNoOsrFrame) return;
  ++samples_in_osr;
  ++by_outcome[static_cast<size_t>(result.outcome)];
}

std::string OsrWarning(uint32_t pid, const OsrRepairCounts& counts, bool stack_copies) {
  if (counts.samples_in_osr == 0) return "";
  const std::string what = absl::StrCat(
      "ran in .NET code entered through on-stack replacement ([OptimizedTier1OSR]: a loop in a "
      "method called once, or before its optimized version was ready)");
  const std::string workaround =
      "or run it with DOTNET_TC_QuickJitForLoops=0 (README, .NET section)";
  if (!stack_copies) {
    return absl::StrCat("pid ", pid, ": ", counts.samples_in_osr, " samples ", what,
                        "; a frame-pointer walk skips such a method's caller (the frame under "
                        "it is the method's own Tier0 code): record with -callgraph fp+cfi, ",
                        workaround);
  }
  const uint64_t unrepaired = counts.unrepaired();
  if (unrepaired * 100 <= counts.samples_in_osr) return "";
  std::string reasons;
  for (size_t i = 2; i < counts.by_outcome.size(); ++i) {
    if (counts.by_outcome[i] == 0) continue;
    absl::StrAppend(&reasons, reasons.empty() ? "" : ", ",
                    OsrRepairOutcomeName(static_cast<OsrRepairOutcome>(i)), " ",
                    counts.by_outcome[i]);
  }
  return absl::StrCat("pid ", pid, ": ", unrepaired, " of ", counts.samples_in_osr, " samples that ",
                      what, " kept the hole under it (", reasons,
                      "): their caller is missing; ", workaround);
}

}  // namespace profcpu::symbolize
