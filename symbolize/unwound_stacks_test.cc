#include "symbolize/unwound_stacks.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMask = 0xff01ff;

class CountingUnwinder : public UserStackUnwinder {
 public:
  UnwoundStack Unwind(const recording::Sample& sample, uint64_t, const AddressSpaceTracker&) override {
    ++calls;
    return {{sample.time_ns, sample.time_ns + 1, sample.time_ns + 2}, sample.time_ns % 2 == 1};
  }
  int calls = 0;
};

recording::Sample DwarfSample(uint64_t time, uint32_t tid) {
  recording::Sample s;
  s.time_ns = time;
  s.tid = tid;
  s.user_regs_abi = 2;
  s.user_regs.assign(17, 0);
  s.user_regs[8] = 0xabc;  // IP
  return s;
}

TEST(UnwoundStacksTest, SavedChainsReplayExactly) {
  testing::ScratchDir dir;
  const std::string path = dir.path() + "/unwound_stacks.bin";
  AddressSpaceTracker spaces;
  CountingUnwinder inner;
  std::vector<UnwoundStack> saved;
  {
    SavingUnwinder saving(&inner, path);
    for (uint64_t t = 10; t < 15; ++t) saved.push_back(saving.Unwind(DwarfSample(t, 7), kMask, spaces));
    ASSERT_TRUE(saving.Finish().ok());
  }
  EXPECT_EQ(inner.calls, 5);
  auto replay = ReplayUnwinder::Open(path);
  ASSERT_TRUE(replay.ok()) << replay.status();
  for (uint64_t t = 10; t < 15; ++t) {
    UnwoundStack again = (*replay)->Unwind(DwarfSample(t, 7), kMask, spaces);
    EXPECT_EQ(again.ips, saved[t - 10].ips);
    EXPECT_EQ(again.truncated, saved[t - 10].truncated);
  }
  EXPECT_EQ((*replay)->warning(), "");
}

// Repairs the way the DWARF unwinder's three outcomes look: frames put back
// after the leaf (even times), the chain unchanged (odd), or, for a chain of
// the leaf alone, CFI's frames in its place (marked truncated).
class RepairingUnwinder : public UserStackUnwinder {
 public:
  UnwoundStack Unwind(const recording::Sample&, uint64_t, const AddressSpaceTracker&) override {
    return {};
  }
  UnwoundStack RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                          const AddressSpaceTracker&) override {
    if (chain.size() == 1) return {{chain[0], 0x500, 0x600}, true};
    if (copy.time_ns % 2 == 1) return {chain, false};
    std::vector<uint64_t> ips = {chain[0], 0x100 + copy.time_ns, 0x200};
    ips.insert(ips.end(), chain.begin() + 1, chain.end());
    return {ips, false};
  }
};

TEST(UnwoundStacksTest, LeafRepairsReplayOnTheSameChains) {
  testing::ScratchDir dir;
  const std::string path = dir.path() + "/unwound_stacks.bin";
  AddressSpaceTracker spaces;
  RepairingUnwinder inner;
  const std::vector<uint64_t> chain = {0x10, 0x20, 0x30};
  const std::vector<uint64_t> leaf_only = {0x10};
  std::vector<UnwoundStack> saved;
  std::vector<uint64_t> regs = {1, 2, 0x10};
  recording::OffCpuSample stay;
  stay.tid = 7;
  stay.user_regs_abi = 2;
  stay.user_regs = regs;
  {
    SavingUnwinder saving(&inner, path);
    for (uint64_t t = 10; t < 14; ++t) {
      stay.time_ns = t;
      saved.push_back(saving.RepairLeaf(StackCopyOf(stay, 0x1c0), chain, spaces));
    }
    stay.time_ns = 14;
    saved.push_back(saving.RepairLeaf(StackCopyOf(stay, 0x1c0), leaf_only, spaces));
    ASSERT_TRUE(saving.Finish().ok());
  }
  EXPECT_EQ(saved[0].ips, (std::vector<uint64_t>{0x10, 0x10a, 0x200, 0x20, 0x30}));
  EXPECT_EQ(saved[1].ips, chain);
  auto replay = ReplayUnwinder::Open(path);
  ASSERT_TRUE(replay.ok()) << replay.status();
  for (uint64_t t = 10; t < 15; ++t) {
    stay.time_ns = t;
    UnwoundStack again =
        (*replay)->RepairLeaf(StackCopyOf(stay, 0x1c0), t < 14 ? chain : leaf_only, spaces);
    EXPECT_EQ(again.ips, saved[t - 10].ips) << t;
    EXPECT_EQ(again.truncated, saved[t - 10].truncated) << t;
  }
  EXPECT_EQ((*replay)->warning(), "");
}

TEST(UnwoundStacksTest, ARepairEntryIsNotADwarfStack) {
  testing::ScratchDir dir;
  const std::string path = dir.path() + "/unwound_stacks.bin";
  AddressSpaceTracker spaces;
  RepairingUnwinder inner;
  recording::OffCpuSample stay;
  stay.time_ns = 10;
  stay.tid = 7;
  {
    SavingUnwinder saving(&inner, path);
    saving.RepairLeaf(StackCopyOf(stay, 0x1c0), {0x10, 0x20}, spaces);
    ASSERT_TRUE(saving.Finish().ok());
  }
  auto replay = ReplayUnwinder::Open(path);
  ASSERT_TRUE(replay.ok());
  UnwoundStack dwarf = (*replay)->Unwind(DwarfSample(10, 7), kMask, spaces);
  EXPECT_TRUE(dwarf.truncated);
  EXPECT_THAT((*replay)->warning(), HasSubstr("corrupt"));
  // Once failed, repairs leave chains as they were.
  UnwoundStack later = (*replay)->RepairLeaf(StackCopyOf(stay, 0x1c0), {0x10, 0x20}, spaces);
  EXPECT_EQ(later.ips, (std::vector<uint64_t>{0x10, 0x20}));
}

TEST(UnwoundStacksTest, NothingIsWrittenWithoutDwarfSamples) {
  testing::ScratchDir dir;
  const std::string path = dir.path() + "/unwound_stacks.bin";
  CountingUnwinder inner;
  {
    SavingUnwinder saving(&inner, path);
    EXPECT_FALSE(saving.wrote());
  }
  EXPECT_FALSE(ReplayUnwinder::Open(path).ok());
}

TEST(UnwoundStacksTest, ForeignOrShortFilesFallBackToTheIp) {
  testing::ScratchDir dir;
  const std::string path = dir.path() + "/unwound_stacks.bin";
  AddressSpaceTracker spaces;
  CountingUnwinder inner;
  {
    SavingUnwinder saving(&inner, path);
    saving.Unwind(DwarfSample(10, 7), kMask, spaces);
    ASSERT_TRUE(saving.Finish().ok());
  }
  auto replay = ReplayUnwinder::Open(path);
  ASSERT_TRUE(replay.ok());
  UnwoundStack other = (*replay)->Unwind(DwarfSample(99, 7), kMask, spaces);  // another sample
  EXPECT_EQ(other.ips, std::vector<uint64_t>{0xabc});
  EXPECT_TRUE(other.truncated);
  EXPECT_THAT((*replay)->warning(), HasSubstr("belongs to another recording"));

  auto short_replay = ReplayUnwinder::Open(path);
  ASSERT_TRUE(short_replay.ok());
  (*short_replay)->Unwind(DwarfSample(10, 7), kMask, spaces);
  UnwoundStack past_end = (*short_replay)->Unwind(DwarfSample(11, 7), kMask, spaces);
  EXPECT_TRUE(past_end.truncated);
  EXPECT_THAT((*short_replay)->warning(), HasSubstr("ends before"));

  EXPECT_FALSE(ReplayUnwinder::Open(dir.Write("x", "not it at all")).ok());
  std::string cut = testing::ReadWholeFile(path);
  auto cut_replay = ReplayUnwinder::Open(dir.Write("cut", cut.substr(0, cut.size() - 3)));
  ASSERT_TRUE(cut_replay.ok());
  EXPECT_TRUE((*cut_replay)->Unwind(DwarfSample(10, 7), kMask, spaces).truncated);
  EXPECT_THAT((*cut_replay)->warning(), HasSubstr("inside an entry"));
}

}  // namespace
}  // namespace profcpu::symbolize
