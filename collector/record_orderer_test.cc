#include "collector/record_orderer.h"

#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

recording::Record SampleAt(uint64_t t) {
  recording::Sample s;
  s.time_ns = t;
  return s;
}

TEST(RecordOrdererTest, HoldsBackTheNewestRoundAndSortsAcrossRounds) {
  std::vector<uint64_t> emitted;
  RecordOrderer orderer([&](const recording::Record& r) {
    emitted.push_back(recording::RecordTime(r));
    return absl::OkStatus();
  });
  // Round 1: two CPUs drained one after the other.
  orderer.Add(SampleAt(10));
  orderer.Add(SampleAt(30));
  orderer.Add(SampleAt(20));
  ASSERT_TRUE(orderer.EndRound().ok());
  EXPECT_TRUE(emitted.empty());  // nothing is final after the first round
  // Round 2 brings a record older than round 1's newest.
  orderer.Add(SampleAt(25));
  orderer.Add(SampleAt(40));
  ASSERT_TRUE(orderer.EndRound().ok());
  EXPECT_EQ(emitted, (std::vector<uint64_t>{10, 20, 25, 30}));
  ASSERT_TRUE(orderer.Flush().ok());
  EXPECT_EQ(emitted, (std::vector<uint64_t>{10, 20, 25, 30, 40}));
}

TEST(RecordOrdererTest, SinkErrorIsReturned) {
  RecordOrderer orderer([](const recording::Record&) { return absl::DataLossError("disk full"); });
  orderer.Add(SampleAt(1));
  EXPECT_EQ(orderer.Flush().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace profcpu::collector
