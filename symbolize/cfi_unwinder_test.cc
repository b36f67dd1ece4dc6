#include "symbolize/cfi_unwinder.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace profcpu::symbolize {
namespace {

constexpr uint64_t kScriptedMask = 0xff01ff;  // AX..IP and R8..R15
constexpr uint64_t kScriptedSp = 0x7ffe0000;
constexpr uint64_t kScriptedIp = 0x401000;

// A library that steps two frames, reading one word at `read_at` on the way,
// and then says it reached the outermost frame: what libdw says when a read
// failed.
class ScriptedUnwinder : public CfiUnwinder {
 public:
  explicit ScriptedUnwinder(uint64_t read_at) : CfiUnwinder(512), read_at_(read_at) {}

 protected:
  WalkEnd Walk(CfiWalk* walk) override {
    uint64_t word = 0;
    walk->OnFrame(kScriptedIp, 0);
    (void)walk->ReadStack(read_at_, &word);
    walk->OnFrame(kScriptedIp + 0x40, 0);
    return WalkEnd::kOutermost;
  }

 private:
  uint64_t read_at_;
};

recording::Sample ScriptedSample(size_t stack_bytes) {
  recording::Sample sample;
  sample.pid = 1;
  sample.tid = 1;
  sample.user_regs_abi = 2;
  sample.user_regs.assign(17, 0);
  sample.user_regs[7] = kScriptedSp;  // SP, perf's order for kScriptedMask
  sample.user_regs[8] = kScriptedIp;
  sample.user_stack.assign(stack_bytes, '\0');
  return sample;
}

TEST(CfiWalkPolicyTest, AnOutermostFrameAfterReadsInsideTheCopyIsWhole) {
  ScriptedUnwinder unwinder(kScriptedSp + 8);
  AddressSpaceTracker spaces;
  UnwoundStack stack = unwinder.Unwind(ScriptedSample(64), kScriptedMask, spaces);
  EXPECT_EQ(stack.ips, (std::vector<uint64_t>{kScriptedIp, kScriptedIp + 0x40}));
  EXPECT_FALSE(stack.truncated);
  EXPECT_EQ(unwinder.stats().truncated, 0u);
}

// A read past the copy: the copy was too short.
TEST(CfiWalkPolicyTest, AnOutermostFrameAfterAReadPastTheCopyIsCutShort) {
  ScriptedUnwinder unwinder(kScriptedSp + 64);
  AddressSpaceTracker spaces;
  UnwoundStack stack = unwinder.Unwind(ScriptedSample(64), kScriptedMask, spaces);
  EXPECT_TRUE(stack.truncated);
  EXPECT_EQ(unwinder.stats().stack_exhausted, 1u);
}

// A read below SP: a wrong CFA (bench/busy_stacks had 7 such 2-frame walks
// libdw called whole; the outputs' thread-root check and libunwind did not).
TEST(CfiWalkPolicyTest, AnOutermostFrameAfterAReadBelowSpIsCutShort) {
  ScriptedUnwinder unwinder(kScriptedSp - 8);
  AddressSpaceTracker spaces;
  UnwoundStack stack = unwinder.Unwind(ScriptedSample(64), kScriptedMask, spaces);
  EXPECT_TRUE(stack.truncated);
  EXPECT_EQ(unwinder.stats().truncated, 1u);
  EXPECT_EQ(unwinder.stats().stack_exhausted, 0u);
}

}  // namespace
}  // namespace profcpu::symbolize
