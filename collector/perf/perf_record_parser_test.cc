#include "collector/perf/perf_record_parser.h"

#include <linux/perf_event.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/byte_io.h"
#include "gtest/gtest.h"
#include "recording/record_codec.h"

namespace profcpu::collector {
namespace {

std::string WithHeader(uint32_t type, uint16_t misc, const std::string& body) {
  std::string out;
  base::ByteWriter w(&out);
  w.U32(type);
  w.U16(misc);
  w.U16(static_cast<uint16_t>(8 + body.size()));
  return out + body;
}

void AppendSampleId(base::ByteWriter& w, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu) {
  w.U32(pid);
  w.U32(tid);
  w.U64(time);
  w.U32(cpu);
  w.U32(0);
}

TEST(PerfRecordParserTest, SampleSplitsKernelAndUserChains) {
  std::string body;
  base::ByteWriter w(&body);
  w.U64(0xffffffff81000010);  // ip
  w.U32(10);
  w.U32(11);
  w.U64(5000);  // time
  w.U32(1);
  w.U32(0);
  w.U64(10101010);  // period
  w.U64(6);         // nr
  w.U64(static_cast<uint64_t>(PERF_CONTEXT_KERNEL));
  w.U64(0xffffffff81000010);
  w.U64(0xffffffff81000020);
  w.U64(static_cast<uint64_t>(PERF_CONTEXT_USER));
  w.U64(0x401000);
  w.U64(0x402000);
  PerfRecordParser parser(127);
  auto record = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, body));
  ASSERT_TRUE(record.has_value());
  const auto& s = std::get<recording::Sample>(*record);
  EXPECT_EQ(s.pid, 10u);
  EXPECT_EQ(s.tid, 11u);
  EXPECT_EQ(s.time_ns, 5000u);
  EXPECT_EQ(s.cpu, 1u);
  EXPECT_EQ(s.period, 10101010u);
  EXPECT_EQ(s.kernel_ips, (std::vector<uint64_t>{0xffffffff81000010, 0xffffffff81000020}));
  EXPECT_EQ(s.user_ips, (std::vector<uint64_t>{0x401000, 0x402000}));
  EXPECT_FALSE(s.truncated);
}

// A -callgraph dwarf sample in user mode: no chain (user chains are
// excluded), then PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER.
std::string DwarfSampleBody(uint64_t abi, uint64_t stack_size, uint64_t dyn_size,
                            size_t truncate_by = 0) {
  std::string body;
  base::ByteWriter w(&body);
  w.U64(0x401234);  // ip
  AppendSampleId(w, 7, 8, 900, 1);
  w.U64(1);  // period
  w.U64(0);  // nr: no chain
  w.U64(abi);
  if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
    for (uint64_t i = 0; i < 17; ++i) w.U64(0x1000 + i);  // kDwarfRegsMask: 17 registers
  }
  w.U64(stack_size);
  for (uint64_t i = 0; i < stack_size; ++i) w.U8(static_cast<uint8_t>(i));
  if (stack_size > 0) w.U64(dyn_size);
  body.resize(body.size() - truncate_by);
  return body;
}

TEST(PerfRecordParserTest, DwarfSampleKeepsRegistersAndTheCopiedStack) {
  PerfRecordParser parser(127, SampleLayout{kDwarfRegsMask, true, /*user_chain=*/false});
  auto record = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                                        DwarfSampleBody(PERF_SAMPLE_REGS_ABI_64, 64, 40)));
  ASSERT_TRUE(record.has_value());
  const auto& s = std::get<recording::Sample>(*record);
  EXPECT_EQ(s.user_regs_abi, static_cast<uint32_t>(PERF_SAMPLE_REGS_ABI_64));
  ASSERT_EQ(s.user_regs.size(), 17u);
  EXPECT_EQ(s.user_regs[8], 0x1008u);  // the IP's slot
  ASSERT_EQ(s.user_stack.size(), 40u);  // dyn_size: only what was really copied
  EXPECT_EQ(s.user_stack[39], 39);
  EXPECT_TRUE(s.user_ips.empty());  // the registers hold the IP
  EXPECT_EQ(parser.malformed(), 0u);
}

TEST(PerfRecordParserTest, DwarfSampleOfAKernelThreadHasNoUserData) {
  PerfRecordParser parser(127, SampleLayout{kDwarfRegsMask, true, /*user_chain=*/false});
  auto record = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL,
                                        DwarfSampleBody(PERF_SAMPLE_REGS_ABI_NONE, 0, 0)));
  ASSERT_TRUE(record.has_value());
  const auto& s = std::get<recording::Sample>(*record);
  EXPECT_EQ(s.user_regs_abi, 0u);
  EXPECT_TRUE(s.user_regs.empty());
  EXPECT_TRUE(s.user_stack.empty());
}

TEST(PerfRecordParserTest, ShortDwarfSamplesAreMalformed) {
  PerfRecordParser parser(127, SampleLayout{kDwarfRegsMask, true, /*user_chain=*/false});
  for (size_t cut : {1, 8, 9, 64, 100}) {
    EXPECT_FALSE(parser
                     .Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                                       DwarfSampleBody(PERF_SAMPLE_REGS_ABI_64, 64, 64, cut)))
                     .has_value())
        << cut;
  }
  // A stack size larger than the record.
  std::string lying = DwarfSampleBody(PERF_SAMPLE_REGS_ABI_64, 0, 0);
  lying.resize(lying.size() - 8);
  base::ByteWriter w(&lying);
  w.U64(1 << 20);
  EXPECT_FALSE(
      parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, lying)).has_value());
  EXPECT_EQ(parser.malformed(), 6u);
}

// A -callgraph fp+cfi sample: the user chain, then BP, SP, IP and the stack
// (bytes 0, 1, 2, ... with `words` written over them at their offsets).
std::string LeafSampleBody(uint64_t bp, uint64_t sp, uint64_t stack_size, uint64_t dyn_size,
                           const std::vector<std::pair<uint64_t, uint64_t>>& words = {}) {
  std::string body;
  base::ByteWriter w(&body);
  w.U64(0x401234);  // ip
  AppendSampleId(w, 7, 8, 900, 1);
  w.U64(1);  // period
  w.U64(3);  // nr
  w.U64(PERF_CONTEXT_USER);
  w.U64(0x401234);
  w.U64(0x401500);
  w.U64(PERF_SAMPLE_REGS_ABI_64);
  w.U64(bp);
  w.U64(sp);
  w.U64(0x401234);
  w.U64(stack_size);
  std::string stack(stack_size, '\0');
  for (uint64_t i = 0; i < stack_size; ++i) stack[i] = static_cast<char>(i);
  for (const auto& [offset, value] : words) std::memcpy(stack.data() + offset, &value, 8);
  body += stack;
  if (stack_size > 0) w.U64(dyn_size);
  return body;
}

TEST(PerfRecordParserTest, LeafSampleKeepsItsChainAndTheStackUpToTheFrameRecord) {
  PerfRecordParser parser(127, SampleLayout{kLeafRegsMask, true, /*user_chain=*/true,
                                            /*trim_to_frame_record=*/true});
  // BP 40 bytes above SP, a frame record whose saved BP is the chain's end
  // (0): bytes [SP, BP + 16) are all a repair may read.
  auto record = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                                        LeafSampleBody(0x7000 + 40, 0x7000, 512, 512,
                                                       {{40, 0x7000 + 300}, {300, 0}})));
  ASSERT_TRUE(record.has_value());
  const auto& s = std::get<recording::Sample>(*record);
  EXPECT_EQ(s.user_ips, (std::vector<uint64_t>{0x401234, 0x401500}));
  EXPECT_EQ(s.user_regs, (std::vector<uint64_t>{0x7000 + 40, 0x7000, 0x401234}));
  EXPECT_EQ(s.user_stack.size(), 316u);

  // BP inside the copy but no frame record (what it points at does not link
  // upwards: frameless code keeps a pointer to a caller's local there): CFI
  // will unwind past it, so all of the copy is kept.
  auto data_bp = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                                         LeafSampleBody(0x7000 + 40, 0x7000, 512, 512)));
  ASSERT_TRUE(data_bp.has_value());
  EXPECT_EQ(std::get<recording::Sample>(*data_bp).user_stack.size(), 512u);

  // BP outside the copy (a frameless caller, or not a frame pointer): all of it.
  for (uint64_t bp : {0ull, 0x6ff8ull, 0x7000ull + 512}) {
    auto other = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                                         LeafSampleBody(bp, 0x7000, 512, 200)));
    ASSERT_TRUE(other.has_value());
    EXPECT_EQ(std::get<recording::Sample>(*other).user_stack.size(), 200u) << bp;
  }
  // A record near the top of the stack: what was copied bounds the trim.
  auto near_top = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                                          LeafSampleBody(0x7000 + 40, 0x7000, 512, 48,
                                                         {{40, 0x7000 + 300}})));
  ASSERT_TRUE(near_top.has_value());
  EXPECT_EQ(std::get<recording::Sample>(*near_top).user_stack.size(), 48u);
  EXPECT_EQ(parser.malformed(), 0u);
}

// The .NET OSR repair reads up to the record of the OSR frame's caller: two
// links above BP when the OSR method called the leaf.
TEST(PerfRecordParserTest, LeafSampleKeepsTwoMoreFrameRecordsWhileTheyRise) {
  PerfRecordParser parser(127, SampleLayout{kLeafRegsMask, true, /*user_chain=*/true,
                                            /*trim_to_frame_record=*/true});
  constexpr uint64_t kSp = 0x7000;
  auto kept = [&](std::vector<std::pair<uint64_t, uint64_t>> words, uint64_t copied = 1024) {
    auto record = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                                          LeafSampleBody(kSp + 40, kSp, 1024, copied, words)));
    EXPECT_TRUE(record.has_value());
    return record.has_value() ? std::get<recording::Sample>(*record).user_stack.size() : 0;
  };
  // BP -> 200 -> 480: up to the third record's end, 496 bytes.
  EXPECT_EQ(kept({{40, kSp + 200}, {200, kSp + 480}}), 496u);
  // The second link does not rise (the chain's end): up to the second record.
  EXPECT_EQ(kept({{40, kSp + 200}, {200, kSp + 100}}), 216u);
  EXPECT_EQ(kept({{40, kSp + 200}, {200, 0}}), 216u);
  // A link rising beyond the copy: what lies below it may be needed, all of it.
  EXPECT_EQ(kept({{40, kSp + 200}, {200, kSp + 4000}}), 1024u);
  EXPECT_EQ(kept({{40, kSp + 200}, {200, kSp + 480}}, /*copied=*/300), 300u);
  // Not believed: a frame pointer a MiB above, so BP was no frame record.
  EXPECT_EQ(kept({{40, kSp + (2 << 20)}}), 1024u);
  // BP's record links up, the next one a MiB above: the chain ends there.
  EXPECT_EQ(kept({{40, kSp + 200}, {200, kSp + (2 << 20)}}), 216u);
  EXPECT_EQ(parser.malformed(), 0u);
}

TEST(PerfRecordParserTest, ChainAtTheDepthLimitIsMarkedTruncated) {
  std::string body;
  base::ByteWriter w(&body);
  w.U64(0x401000);
  AppendSampleId(w, 1, 1, 1, 0);
  w.U64(1);
  w.U64(4);
  w.U64(static_cast<uint64_t>(PERF_CONTEXT_USER));
  for (int i = 0; i < 3; ++i) w.U64(0x401000 + i);
  PerfRecordParser parser(3);
  auto record = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, 0, body));
  ASSERT_TRUE(record.has_value());
  EXPECT_TRUE(std::get<recording::Sample>(*record).truncated);
}

TEST(PerfRecordParserTest, CallchainLongerThanRecordIsRejected) {
  std::string body;
  base::ByteWriter w(&body);
  w.U64(0x401000);
  AppendSampleId(w, 1, 1, 1, 0);
  w.U64(1);
  w.U64(1000000);  // nr far beyond the record
  PerfRecordParser parser(127);
  EXPECT_FALSE(parser.Parse(WithHeader(PERF_RECORD_SAMPLE, 0, body)).has_value());
  EXPECT_EQ(parser.malformed(), 1u);
}

TEST(PerfRecordParserTest, Mmap2WithFilename) {
  std::string body;
  base::ByteWriter w(&body);
  w.U32(42);
  w.U32(43);
  w.U64(0x7f0000000000);
  w.U64(0x2000);
  w.U64(0x1000);
  w.U32(8);
  w.U32(1);
  w.U64(12345);
  w.U64(0);
  w.U32(5);  // PROT_READ|PROT_EXEC
  w.U32(2);
  body += std::string("/usr/lib/libfoo.so\0\0\0\0\0\0", 24);
  AppendSampleId(w, 42, 43, 777, 0);
  PerfRecordParser parser(127);
  auto record = parser.Parse(WithHeader(PERF_RECORD_MMAP2, 0, body));
  ASSERT_TRUE(record.has_value());
  const auto& m = std::get<recording::Mmap>(*record);
  EXPECT_EQ(m.filename, "/usr/lib/libfoo.so");
  EXPECT_EQ(m.time_ns, 777u);
  EXPECT_EQ(m.inode, 12345u);
  EXPECT_EQ(m.file_offset, 0x1000u);
  EXPECT_EQ(m.prot, 5u);
}

TEST(PerfRecordParserTest, CommExecAndForkAndLost) {
  PerfRecordParser parser(127);
  {
    std::string body;
    base::ByteWriter w(&body);
    w.U32(7);
    w.U32(7);
    body += std::string("worker\0\0", 8);
    AppendSampleId(w, 7, 7, 100, 0);
    auto record = parser.Parse(WithHeader(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body));
    ASSERT_TRUE(record.has_value());
    EXPECT_EQ(std::get<recording::Comm>(*record).comm, "worker");
    EXPECT_TRUE(std::get<recording::Comm>(*record).exec);
  }
  {
    std::string body;
    base::ByteWriter w(&body);
    w.U32(7);
    w.U32(7);
    w.U32(9);
    w.U32(7);
    w.U64(200);
    AppendSampleId(w, 7, 9, 200, 0);
    auto record = parser.Parse(WithHeader(PERF_RECORD_FORK, 0, body));
    ASSERT_TRUE(record.has_value());
    EXPECT_EQ(std::get<recording::Fork>(*record).tid, 9u);
  }
  {
    std::string body;
    base::ByteWriter w(&body);
    w.U64(1);
    w.U64(17);
    AppendSampleId(w, 0, 0, 300, 1);
    auto record = parser.Parse(WithHeader(PERF_RECORD_LOST, 0, body));
    ASSERT_TRUE(record.has_value());
    EXPECT_EQ(std::get<recording::Lost>(*record).count, 17u);
    EXPECT_EQ(std::get<recording::Lost>(*record).reason, recording::LossReason::kRingBufferFull);
  }
  EXPECT_EQ(parser.malformed(), 0u);
}

TEST(PerfRecordParserTest, TruncatedRecordsAreCountedNotTrusted) {
  PerfRecordParser parser(127);
  EXPECT_FALSE(parser.Parse(WithHeader(PERF_RECORD_MMAP2, 0, "short")).has_value());
  EXPECT_FALSE(parser.Parse(WithHeader(PERF_RECORD_COMM, 0, "")).has_value());
  EXPECT_FALSE(parser.Parse("abc").has_value());
  EXPECT_EQ(parser.malformed(), 3u);
}

// Found by tests/fuzz/perf_record_fuzzer: with kernel.perf_event_max_stack
// raised, a chain deeper than the recording allows made the file unreadable.
TEST(PerfRecordParserTest, ChainsDeeperThanTheRecordingAllowsAreCut) {
  std::string body;
  base::ByteWriter w(&body);
  w.U64(0x401000);
  w.U32(10);
  w.U32(11);
  w.U64(5000);
  w.U32(0);
  w.U32(0);
  w.U64(1);
  const uint64_t frames = recording::kMaxCallchainDepth + 100;
  w.U64(frames + 1);
  w.U64(static_cast<uint64_t>(PERF_CONTEXT_USER));
  for (uint64_t i = 0; i < frames; ++i) w.U64(0x401000 + i);
  PerfRecordParser parser(127);
  auto record = parser.Parse(WithHeader(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body));
  ASSERT_TRUE(record.has_value());
  const auto& s = std::get<recording::Sample>(*record);
  ASSERT_EQ(s.user_ips.size(), recording::kMaxCallchainDepth);
  EXPECT_EQ(s.user_ips.front(), 0x401000u);  // the leaf is kept
  EXPECT_TRUE(s.truncated);
  std::string encoded;
  recording::EncodeRecord(*record, &encoded);
  EXPECT_TRUE(recording::DecodeRecord(static_cast<uint32_t>(recording::RecordType::kSample),
                                      absl::string_view(encoded).substr(recording::kRecordPrefixSize))
                  .ok());
}

}  // namespace
}  // namespace profcpu::collector
