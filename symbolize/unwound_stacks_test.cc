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
