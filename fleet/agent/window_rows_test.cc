#include "fleet/agent/window_rows.h"

#include <string>
#include <utility>

#include "fleet/agent/window_payload.h"
#include "fleet/store/stable_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

symbolize::Frame FrameNamed(std::string function) {
  symbolize::Frame frame;
  frame.function = std::move(function);
  return frame;
}

using ::testing::ElementsAre;

// A profile of two processes running the same native code, one second apart.
class WindowRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    symbolize::Module libc;
    libc.path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    libc.build_id = std::string("\x93\xac", 2);
    profile_.SetModules({libc});
    main_ = Native(0x1000, "main");
    work_ = Native(0x2000, "work");
    symbolize::SymbolTable table;
    table.Insert(Code(0x1000), {"/usr/lib/x86_64-linux-gnu/libc.so.6", {FrameNamed("main")}});
    table.Insert(Code(0x2000), {"/usr/lib/x86_64-linux-gnu/libc.so.6", {FrameNamed("work")}});
    profile_.SetSymbols(table);
  }
  static symbolize::CodeLocation Code(uint64_t offset) {
    return {symbolize::CodeKind::kNative, 0, offset};
  }
  uint32_t Native(uint64_t offset, const char*) {
    fold::Location location;
    location.address = 0x7f0000000000 + offset;
    location.code = Code(offset);
    return profile_.InternLocation(location);
  }
  void Add(uint32_t pid, const char* comm, uint64_t time_ns, std::vector<uint32_t> leaf_first,
           uint64_t period = 0) {
    fold::Sample sample;
    sample.pid = sample.tid = pid;
    sample.comm = profile_.InternString(comm);
    sample.event = profile_.InternString("cpu-clock");
    sample.time_ns = time_ns;
    sample.period = period;
    sample.stack = profile_.InternStack(leaf_first);
    profile_.AddSample(sample);
  }
  static ProcessLabels LabelsFor(uint32_t pid, const std::string& comm) {
    ProcessLabels labels;
    labels.node = "node-a";
    labels.pod = pid == 10 ? "api-1" : "api-2";
    labels.comm = comm;
    return labels;
  }

  fold::Profile profile_;
  uint32_t main_ = 0, work_ = 0;
  // Monotonic 5 s is wall 1,700,000,000 s.
  WindowClock clock_{5'000'000'000, int64_t{1'700'000'000} * 1'000'000'000, false};
};

TEST_F(WindowRowsTest, CountsPerSecondProcessAndStackWithSharedIds) {
  Add(10, "api", 5'100'000'000, {work_, main_});
  Add(10, "api", 5'200'000'000, {work_, main_});
  Add(10, "api", 6'100'000'000, {work_, main_});
  Add(20, "api", 5'300'000'000, {work_, main_});
  Add(20, "api", 5'400'000'000, {main_});
  WindowRows rows = BuildWindowRows(profile_, clock_, LabelsFor);

  EXPECT_EQ(rows.total, 5u);
  ASSERT_EQ(rows.labels.size(), 2u);
  ASSERT_EQ(rows.frames.size(), 2u);
  EXPECT_EQ(rows.frames[0].module, "libc.so.6");
  EXPECT_EQ(rows.frames[0].build_id, "93ac");
  const uint64_t main_id = StableId({"main", "libc.so.6", "93ac"});
  const uint64_t work_id = StableId({"work", "libc.so.6", "93ac"});
  ASSERT_EQ(rows.stacks.size(), 2u);
  EXPECT_THAT(rows.stacks[0].frame_ids, ElementsAre(main_id, work_id));  // root first
  EXPECT_EQ(rows.stacks[0].id, StackId({main_id, work_id}));
  // (second, process, stack): two processes share one stack id.
  ASSERT_EQ(rows.samples.size(), 4u);
  EXPECT_EQ(rows.samples[0].time, 1'700'000'000u);
  EXPECT_EQ(rows.samples[0].count, 2u);
  EXPECT_EQ(rows.samples[1].time, 1'700'000'001u);
  EXPECT_EQ(rows.samples[2].stack_id, rows.samples[0].stack_id);
  EXPECT_NE(rows.samples[2].labels, rows.samples[0].labels);
  EXPECT_EQ(rows.labels[rows.samples[2].labels].pod, "api-2");
}

TEST_F(WindowRowsTest, UnnamedProcessCodeIsUnknownNotJit) {
  fold::Location garbage;  // a frame-pointer walk through code without frame pointers
  garbage.address = 0x1234;
  garbage.code = {symbolize::CodeKind::kProcess, 10, 0x1234};
  fold::Location jit;
  jit.address = 0x5000;
  jit.code = {symbolize::CodeKind::kProcess, 10, 0x5000};
  symbolize::SymbolTable table = profile_.symbols();
  table.Insert(jit.code, {"/tmp/perf-10.map", {FrameNamed("Program::Main()[Optimized]")}});
  profile_.SetSymbols(table);
  Add(10, "api", 5'100'000'000,
      {profile_.InternLocation(jit), profile_.InternLocation(garbage), main_});
  WindowRows rows = BuildWindowRows(profile_, clock_, LabelsFor);
  ASSERT_EQ(rows.frames.size(), 3u);
  EXPECT_EQ(rows.frames[1].name, "[unknown]");
  EXPECT_EQ(rows.frames[1].module, "");
  EXPECT_EQ(rows.frames[2].name, "Program::Main[Optimized]");  // as folded names it
  EXPECT_EQ(rows.frames[2].module, "[jit]");  // never the pid's perf map path
}

TEST_F(WindowRowsTest, CountedSamplesWeighTheirCount) {
  clock_.weighted = true;
  Add(10, "api", 6'000'000'000, {work_, main_}, /*period=*/7);
  EXPECT_EQ(BuildWindowRows(profile_, clock_, LabelsFor).total, 7u);
}

TEST_F(WindowRowsTest, PayloadLeavesOutDeliveredIdsAndRoundTrips) {
  Add(10, "api", 5'100'000'000, {work_, main_});
  Add(10, "api", 5'100'000'000, {main_});
  WindowRows rows = BuildWindowRows(profile_, clock_, LabelsFor);
  const uint64_t main_id = StableId({"main", "libc.so.6", "93ac"});
  WindowPayload payload = BuildWindowPayload(rows, 42, {main_id, rows.stacks[1].id});
  EXPECT_THAT(payload.frame_ids, ElementsAre(StableId({"work", "libc.so.6", "93ac"})));
  EXPECT_THAT(payload.stack_ids, ElementsAre(rows.stacks[0].id));
  EXPECT_EQ(payload.first_second, 1'700'000'000u);
  EXPECT_EQ(payload.samples, 2u);
  EXPECT_EQ(payload.node, "node-a");

  auto decoded = DecodeWindowPayload(EncodeWindowPayload(payload));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->window_id, 42u);
  EXPECT_EQ(decoded->samples_body, payload.samples_body);
  EXPECT_EQ(decoded->frame_ids, payload.frame_ids);
  const std::string bytes = EncodeWindowPayload(payload);
  for (size_t cut : {size_t{0}, size_t{7}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_FALSE(DecodeWindowPayload(bytes.substr(0, cut)).ok()) << cut;
  }
}

}  // namespace
}  // namespace profcpu::fleet
