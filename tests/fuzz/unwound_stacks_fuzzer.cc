// unwound_stacks.bin (symbolize/unwound_stacks.h) comes with a run folder or a
// prof.tar.gz from anywhere: postprocess replays it for the recording's DWARF
// samples and -callgraph fp+cfi leaf repairs. Checks: no crash, bounded
// entries, and once the file is found wrong every later sample keeps only its
// IP (DWARF) or its chain as it was (fp+cfi).
#include <string>
#include <vector>

#include "symbolize/unwound_stacks.h"
#include "tests/fuzz/fuzz_support.h"

namespace symbolize = profcpu::symbolize;
using profcpu::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  profcpu::fuzz::MemFile file(profcpu::fuzz::AsText(data, size));
  auto replay = symbolize::ReplayUnwinder::Open(file.path());
  if (!replay.ok()) return 0;
  symbolize::AddressSpaceTracker spaces;
  // The samples the seeds were written for (make_fuzz_seeds): thread 7,
  // 1000 ns apart, IP 0x1000.
  for (uint64_t i = 0; i < 64; ++i) {
    profcpu::recording::Sample sample;
    sample.time_ns = 1000 * (i + 1);
    sample.tid = 7;
    sample.pid = 7;
    sample.user_regs_abi = 2;
    sample.user_regs.assign(17, 0);
    sample.user_regs[8] = 0x1000;
    // Odd samples are -callgraph fp+cfi leaf repairs of a two-frame chain.
    if (i % 2 == 1) {
      const std::vector<uint64_t> chain = {0x1000, 0x2000};
      symbolize::UnwoundStack stack =
          (*replay)->RepairLeaf(symbolize::StackCopyOf(sample, 0x1c0), chain, spaces);
      Check(stack.ips.size() <= 4096 + chain.size(), "a repair longer than the format allows");
      if (!(*replay)->warning().empty()) {
        Check(stack.ips == chain, "a chain after the file went wrong was changed");
      }
      continue;
    }
    symbolize::UnwoundStack stack = (*replay)->Unwind(sample, 0xff01ff, spaces);
    Check(stack.ips.size() <= 4096, "an entry longer than the format allows");
    if (!(*replay)->warning().empty()) {
      Check(stack.ips.size() <= 1, "a sample after the file went wrong got a replayed chain");
    }
  }
  return 0;
}
