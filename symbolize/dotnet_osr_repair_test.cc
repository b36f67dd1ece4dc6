#include "symbolize/dotnet_osr_repair.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::symbolize {
namespace dotnet_osr_repair_test {  // unity builds: names of its own
namespace {

using ::testing::ElementsAre;

// Code in the synthetic address space (the layout of a real sample, .NET
// 10.0.12: docs/dotnet-osr.md).
constexpr uint64_t kMainTier0 = 0x7f0000001b10;    // Main[QuickJitted], after its call to Work
constexpr uint64_t kWorkTier0 = 0x7f0000002a70;    // Work[QuickJitted], after the patchpoint call
constexpr uint64_t kWorkOsr = 0x7f0000002b27;      // Work[OptimizedTier1OSR]
constexpr uint64_t kWorkOsrCall = 0x7f0000002b50;  // Work[OSR], after a call to Mix
constexpr uint64_t kMix = 0x7f0000002f9a;          // Mix[OptimizedTier1]
constexpr uint64_t kCoreclr = 0x7f00100003cc;      // libcoreclr.so: CallDescrWorkerInternal
constexpr uint64_t kCoreclr2 = 0x7f0010000a31;     // libcoreclr.so: its caller

bool IsOsr(uint64_t a) { return a >= 0x7f0000002ae0 && a < 0x7f0000002b89; }
bool IsCode(uint64_t a) {
  return (a >= 0x7f0000001000 && a < 0x7f0000003000) || (a >= 0x7f0010000000 && a < 0x7f0010100000);
}
const OsrCode kCode{IsOsr, IsCode};

// A stack copy of `size` bytes from `sp`, word by word.
struct Stack {
  uint64_t sp;
  std::vector<uint64_t> words;
  Stack(uint64_t sp, size_t size) : sp(sp), words(size / 8, 0) {}
  void Set(uint64_t address, uint64_t value) { words.at((address - sp) / 8) = value; }
  std::string Bytes() const {
    std::string bytes(words.size() * 8, '\0');
    std::memcpy(bytes.data(), words.data(), bytes.size());
    return bytes;
  }
};

// The sample of the experiment: Main -> Work, Work entered through OSR and
// sampled in its loop. rsp = 0x1000, OSR rbp = rsp + 32, its record
// {Main's rbp, Work[QuickJitted] word}; the Tier0 record 112 bytes higher
// {Main's rbp, return into Main}; Main's record {.., return into coreclr}.
constexpr uint64_t kSp = 0x7ffc00001000;
constexpr uint64_t kOsrFp = kSp + 32;
constexpr uint64_t kTier0Fp = kOsrFp + 112;
constexpr uint64_t kMainFp = kSp + 0xf0;
constexpr uint64_t kOuterFp = kSp + 0x110;

Stack OsrLeafStack(size_t size = 512) {
  Stack s(kSp, size);
  s.Set(kOsrFp, kMainFp);
  s.Set(kOsrFp + 8, kWorkTier0);
  s.Set(kOsrFp + 24, 0x3e8);  // Tier0 locals
  s.Set(kOsrFp + 80, kSp + 0x3b0);
  s.Set(kTier0Fp, kMainFp);
  s.Set(kTier0Fp + 8, kMainTier0);
  s.Set(kMainFp, kOuterFp);
  s.Set(kMainFp + 8, kCoreclr);
  s.Set(kOuterFp, kSp + 0x1f0);
  s.Set(kOuterFp + 8, kCoreclr2);
  return s;
}

TEST(DotnetOsrRepairTest, LeafInOsrCodeGetsItsCallerBack) {
  const Stack s = OsrLeafStack();
  const std::string bytes = s.Bytes();
  const std::vector<uint64_t> chain = {kWorkOsr, kWorkTier0, kCoreclr, kCoreclr2};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kRepaired);
  EXPECT_THAT(r.chain, ElementsAre(kWorkOsr, kMainTier0, kCoreclr, kCoreclr2));
  EXPECT_EQ(r.repaired, 1);
  EXPECT_EQ(r.bytes_used, 160u);  // as measured: rsp + 160 reaches the Tier0 record
}

TEST(DotnetOsrRepairTest, OsrFrameBelowACalleeGetsItsCallerBack) {
  // Work[OSR] -> Mix: the leaf Mix has its own frame below the OSR frame.
  Stack s = OsrLeafStack();
  const uint64_t sp = kSp - 0x30;
  Stack t(sp, 512 + 0x30);
  for (size_t i = 0; i < s.words.size(); ++i) t.words[i + 6] = s.words[i];
  const uint64_t mix_fp = sp + 0x20;
  t.Set(mix_fp, kOsrFp);
  t.Set(mix_fp + 8, kWorkOsrCall);
  const std::string bytes = t.Bytes();
  const std::vector<uint64_t> chain = {kMix, kWorkOsrCall, kWorkTier0, kCoreclr, kCoreclr2};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, sp, mix_fp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kRepaired);
  EXPECT_THAT(r.chain, ElementsAre(kMix, kWorkOsrCall, kMainTier0, kCoreclr, kCoreclr2));
  EXPECT_EQ(r.bytes_used, 0x30u + 160u);
}

TEST(DotnetOsrRepairTest, FramesALeafRepairPutFirstAreSkipped) {
  // A frameless native leaf called from OSR code: a CFI leaf repair put the
  // OSR return address before the walk's first one ([bp+8], the Tier0 word).
  const Stack s = OsrLeafStack();
  const std::string bytes = s.Bytes();
  const uint64_t native_leaf = 0x7f0010000100;
  const std::vector<uint64_t> chain = {native_leaf, kWorkOsrCall, kWorkTier0, kCoreclr};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kRepaired);
  EXPECT_THAT(r.chain, ElementsAre(native_leaf, kWorkOsrCall, kMainTier0, kCoreclr));
}

TEST(DotnetOsrRepairTest, OsrMainGetsTheRuntimeAsCaller) {
  // The loop in Main: Main's Tier0 record returns into libcoreclr.so.
  Stack s = OsrLeafStack();
  s.Set(kTier0Fp + 8, kCoreclr);
  s.Set(kMainFp + 8, kCoreclr2);
  const std::string bytes = s.Bytes();
  const std::vector<uint64_t> chain = {kWorkOsr, kWorkTier0, kCoreclr2};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kRepaired);
  EXPECT_THAT(r.chain, ElementsAre(kWorkOsr, kCoreclr, kCoreclr2));
}

TEST(DotnetOsrRepairTest, ChainEndingAtTheOsrFrameGetsTheCallerAppended) {
  const Stack s = OsrLeafStack();
  const std::string bytes = s.Bytes();
  const std::vector<uint64_t> chain = {kWorkOsr};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kRepaired);
  EXPECT_THAT(r.chain, ElementsAre(kWorkOsr, kMainTier0));
}

TEST(DotnetOsrRepairTest, ChainsWithoutOsrCodeAreLeftAlone) {
  const Stack s = OsrLeafStack();
  const std::string bytes = s.Bytes();
  const std::vector<uint64_t> chain = {kMix, kMainTier0, kCoreclr};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kNoOsrFrame);
  EXPECT_EQ(r.chain, chain);
  EXPECT_EQ(r.repaired, 0);
  EXPECT_EQ(r.bytes_used, 0u);
}

TEST(DotnetOsrRepairTest, ShortCopyLeavesTheChainAlone) {
  // The copy ends (rsp + 144) before the Tier0 record's return address.
  const Stack full = OsrLeafStack();
  const std::string bytes = full.Bytes().substr(0, 152);
  const std::vector<uint64_t> chain = {kWorkOsr, kWorkTier0, kCoreclr};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kCopyTooShort);
  EXPECT_EQ(r.chain, chain);
  // 160 bytes are enough.
  EXPECT_EQ(RepairDotnetOsrChain(chain, kSp, kOsrFp, full.Bytes().substr(0, 160), kCode).outcome,
            OsrRepairOutcome::kRepaired);
}

TEST(DotnetOsrRepairTest, OsrFrameOutsideTheCopy) {
  const Stack s = OsrLeafStack();
  const std::string bytes = s.Bytes().substr(0, 32);  // ends at rbp
  const std::vector<uint64_t> chain = {kWorkOsr, kWorkTier0, kCoreclr};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kFrameOutsideCopy);
  EXPECT_EQ(r.chain, chain);
}

TEST(DotnetOsrRepairTest, TwoCandidateRecordsAreAmbiguous) {
  Stack s = OsrLeafStack();
  s.Set(kOsrFp + 48, kMainFp);
  s.Set(kOsrFp + 56, kMainTier0 + 0x20);
  const std::string bytes = s.Bytes();
  const std::vector<uint64_t> chain = {kWorkOsr, kWorkTier0, kCoreclr};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kAmbiguous);
  EXPECT_EQ(r.chain, chain);
}

TEST(DotnetOsrRepairTest, OnlyCodeAfterTheSavedFramePointerCounts) {
  // A local equal to Main's rbp followed by data, and a slot repeating the
  // Tier0 word itself, are not the Tier0 record.
  Stack s = OsrLeafStack();
  s.Set(kOsrFp + 48, kMainFp);
  s.Set(kOsrFp + 56, 0x12345);
  s.Set(kOsrFp + 64, kMainFp);
  s.Set(kOsrFp + 72, kWorkTier0);
  const std::string bytes = s.Bytes();
  const std::vector<uint64_t> chain = {kWorkOsr, kWorkTier0, kCoreclr};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kRepaired);
  EXPECT_THAT(r.chain, ElementsAre(kWorkOsr, kMainTier0, kCoreclr));
}

TEST(DotnetOsrRepairTest, SearchStopsAtTheCallersFrame) {
  // No Tier0 record below Main's frame; one above it (in Main's caller's
  // frame) must not be taken.
  Stack s = OsrLeafStack();
  s.Set(kTier0Fp, 0);
  s.Set(kTier0Fp + 8, 0);
  s.Set(kOuterFp + 16, kMainFp);
  s.Set(kOuterFp + 24, kMainTier0);
  const std::string bytes = s.Bytes();
  const std::vector<uint64_t> chain = {kWorkOsr, kWorkTier0, kCoreclr};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kNoTier0Record);
  EXPECT_EQ(r.chain, chain);
}

TEST(DotnetOsrRepairTest, ChainThatIsNotThisStacksWalkIsLeftAlone) {
  const Stack s = OsrLeafStack();
  const std::string bytes = s.Bytes();
  const std::vector<uint64_t> chain = {kWorkOsr, 0x7f0000001234, kCoreclr};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kChainMismatch);
  EXPECT_EQ(r.chain, chain);
}

TEST(DotnetOsrRepairTest, HostileStacksEndTheSearch) {
  // Frame pointers pointing down or nowhere, an empty copy.
  Stack s = OsrLeafStack();
  s.Set(kOsrFp, kSp);  // the caller's "frame" below this one: search to the copy's end
  const std::string bytes = s.Bytes();
  const std::vector<uint64_t> chain = {kWorkOsr, kWorkTier0};
  const OsrRepairResult r = RepairDotnetOsrChain(chain, kSp, kOsrFp, bytes, kCode);
  EXPECT_EQ(r.outcome, OsrRepairOutcome::kCopyTooShort);
  EXPECT_EQ(RepairDotnetOsrChain(chain, kSp, kOsrFp, "", kCode).outcome,
            OsrRepairOutcome::kFrameOutsideCopy);
  EXPECT_EQ(RepairDotnetOsrChain(chain, kSp, ~uint64_t{0} - 4, bytes, kCode).outcome,
            OsrRepairOutcome::kFrameOutsideCopy);
  EXPECT_NE(RepairDotnetOsrChain(chain, ~uint64_t{0} - 16, ~uint64_t{0} - 8, bytes, kCode).outcome,
            OsrRepairOutcome::kRepaired);
  EXPECT_EQ(RepairDotnetOsrChain({}, kSp, kOsrFp, bytes, kCode).outcome,
            OsrRepairOutcome::kNoOsrFrame);
}

TEST(DotnetOsrRepairTest, OutcomesHaveNames) {
  EXPECT_STREQ(OsrRepairOutcomeName(OsrRepairOutcome::kRepaired), "repaired");
  EXPECT_STREQ(OsrRepairOutcomeName(OsrRepairOutcome::kCopyTooShort), "copy_too_short");
}

TEST(DotnetOsrRepairTest, WarnsOncePerProcessWhenCallersAreMissing) {
  OsrRepairCounts counts;
  EXPECT_EQ(OsrWarning(7, counts, false), "");
  OsrRepairResult result;
  counts.Add(result);  // no OSR frame: not counted
  EXPECT_EQ(counts.samples_in_osr, 0u);
  result.outcome = OsrRepairOutcome::kRepaired;
  for (int i = 0; i < 99; ++i) counts.Add(result);
  result.outcome = OsrRepairOutcome::kNoTier0Record;
  counts.Add(result);
  EXPECT_EQ(counts.unrepaired(), 1u);
  // Without stack copies every OSR sample lost its caller.
  EXPECT_THAT(OsrWarning(7, counts, false),
              ::testing::HasSubstr("pid 7: 100 samples ran in .NET code entered through on-stack "
                                   "replacement"));
  EXPECT_THAT(OsrWarning(7, counts, false), ::testing::HasSubstr("-callgraph fp+cfi"));
  // With copies, 1% unrepaired is the OSR prolog's share: no warning.
  EXPECT_EQ(OsrWarning(7, counts, true), "");
  result.outcome = OsrRepairOutcome::kCopyTooShort;
  counts.Add(result);
  counts.Add(result);
  EXPECT_THAT(OsrWarning(7, counts, true),
              ::testing::HasSubstr("3 of 102 samples that ran in .NET code entered through"));
  EXPECT_THAT(OsrWarning(7, counts, true),
              ::testing::HasSubstr("(copy_too_short 2, no_tier0_record 1)"));
  EXPECT_THAT(OsrWarning(7, counts, true), ::testing::HasSubstr("DOTNET_TC_QuickJitForLoops=0"));
}

}  // namespace
}  // namespace dotnet_osr_repair_test
}  // namespace profcpu::symbolize
