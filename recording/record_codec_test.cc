#include "recording/record_codec.h"

#include <string>

#include "base/byte_io.h"
#include "gtest/gtest.h"

namespace profcpu::recording {
namespace {

Record RoundTrip(const Record& in) {
  std::string bytes;
  EncodeRecord(in, &bytes);
  base::ByteReader prefix(bytes);
  uint32_t type = prefix.U32();
  uint32_t size = prefix.U32();
  EXPECT_EQ(size, bytes.size() - kRecordPrefixSize);
  auto out = DecodeRecord(type, absl::string_view(bytes).substr(kRecordPrefixSize));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : Record{};
}

TEST(RecordCodecTest, SampleRoundTrips) {
  Sample s;
  s.time_ns = 123456789;
  s.pid = 10;
  s.tid = 11;
  s.cpu = 1;
  s.period = 10101010;
  s.kernel_ips = {0xffffffff81000000ull, 0xffffffff81000010ull};
  s.user_ips = {0x401000, 0x402000, 0x403000};
  s.truncated = true;
  auto out = std::get<Sample>(RoundTrip(s));
  EXPECT_EQ(out.time_ns, s.time_ns);
  EXPECT_EQ(out.tid, 11u);
  EXPECT_EQ(out.kernel_ips, s.kernel_ips);
  EXPECT_EQ(out.user_ips, s.user_ips);
  EXPECT_TRUE(out.truncated);
}

TEST(RecordCodecTest, DwarfSampleRoundTripsAndFpSampleHasNoTail) {
  Sample s;
  s.pid = 3;
  s.kernel_ips = {0xffffffff81000000ull};
  s.user_regs_abi = 2;  // PERF_SAMPLE_REGS_ABI_64
  s.user_regs = {1, 2, 3, 0x7ffd0000, 0x401000};
  s.user_stack = std::string("\x00\x01stack bytes\xff", 15);
  auto out = std::get<Sample>(RoundTrip(s));
  EXPECT_EQ(out.user_regs_abi, 2u);
  EXPECT_EQ(out.user_regs, s.user_regs);
  EXPECT_EQ(out.user_stack, s.user_stack);
  EXPECT_TRUE(out.user_ips.empty());

  // A frame-pointer sample is encoded exactly as version 1 encoded it.
  Sample fp;
  fp.user_ips = {0x401000};
  std::string with_tail, without;
  EncodeRecord(s, &with_tail);
  EncodeRecord(fp, &without);
  EXPECT_EQ(without.size(), kRecordPrefixSize + 8 + 4 + 4 + 4 + 8 + 1 + 4 + 4 + 8);
  auto back = std::get<Sample>(RoundTrip(fp));
  EXPECT_EQ(back.user_regs_abi, 0u);
  EXPECT_TRUE(back.user_regs.empty());
  EXPECT_TRUE(back.user_stack.empty());
}

TEST(RecordCodecTest, DwarfTailIsBounded) {
  Sample s;
  s.user_regs_abi = 2;
  s.user_regs.assign(kMaxUserRegs + 1, 7);
  std::string bytes;
  EncodeRecord(s, &bytes);
  EXPECT_EQ(DecodeRecord(2, absl::string_view(bytes).substr(kRecordPrefixSize)).status().code(),
            absl::StatusCode::kDataLoss);
  s.user_regs = {1};
  s.user_stack.assign(kMaxUserStack + 8, 'x');
  bytes.clear();
  EncodeRecord(s, &bytes);
  EXPECT_EQ(DecodeRecord(2, absl::string_view(bytes).substr(kRecordPrefixSize)).status().code(),
            absl::StatusCode::kDataLoss);
  // A tail cut short is a truncated record.
  s.user_stack = "abcdefgh";
  bytes.clear();
  EncodeRecord(s, &bytes);
  EXPECT_FALSE(
      DecodeRecord(2, absl::string_view(bytes).substr(kRecordPrefixSize, bytes.size() - 12)).ok());
}

TEST(RecordCodecTest, MmapAndHeaderRoundTrip) {
  Mmap m;
  m.pid = 5;
  m.start = 0x7f0000000000;
  m.length = 0x1000;
  m.file_offset = 0x2000;
  m.inode = 99;
  m.prot = 5;
  m.build_id = std::string("\x01\x02\x00\x03", 4);
  m.filename = "/usr/lib/libc.so.6";
  auto mo = std::get<Mmap>(RoundTrip(m));
  EXPECT_EQ(mo.filename, m.filename);
  EXPECT_EQ(mo.build_id, m.build_id);
  EXPECT_EQ(mo.file_offset, 0x2000u);

  Header h;
  h.event_name = "cpu-clock";
  h.sample_rate = 99;
  h.target = "pid 1";
  h.boot_id = "abc";
  h.callgraph = "dwarf";
  h.user_regs_mask = 0xff01ff;
  h.user_stack_size = 8192;
  h.counted_interval_ns = 1'000'000'000;
  auto ho = std::get<Header>(RoundTrip(h));
  EXPECT_EQ(ho.event_name, "cpu-clock");
  EXPECT_EQ(ho.sample_rate, 99u);
  EXPECT_EQ(ho.boot_id, "abc");
  EXPECT_EQ(ho.format_version, 3u);
  EXPECT_EQ(ho.callgraph, "dwarf");
  EXPECT_EQ(ho.user_regs_mask, 0xff01ffu);
  EXPECT_EQ(ho.user_stack_size, 8192u);
  EXPECT_EQ(ho.counted_interval_ns, 1'000'000'000u);
}

TEST(RecordCodecTest, ProcessInfoRoundTripsAndOldPayloadsDefaultToTmp) {
  ProcessInfo p;
  p.pid = 42;
  p.namespace_pids = {42, 1};
  p.command_line = "dotnet app.dll";
  p.jit_directory = "/var/jit";
  auto out = std::get<ProcessInfo>(RoundTrip(p));
  EXPECT_EQ(out.namespace_pids, (std::vector<uint32_t>{42, 1}));
  EXPECT_EQ(out.jit_directory, "/var/jit");

  // A payload written before jit_directory existed.
  std::string old;
  base::ByteWriter w(&old);
  w.U64(0);
  w.U32(42);
  w.U32(1);
  w.U32(42);
  w.String("app");
  auto decoded = DecodeRecord(static_cast<uint32_t>(RecordType::kProcessInfo), old);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(std::get<ProcessInfo>(*decoded).jit_directory, "/tmp");
}

TEST(RecordCodecTest, DotnetRuntimeRoundTripsAndBoundsItsDroppedKinds) {
  DotnetRuntime d;
  d.time_ns = 99;
  d.pid = 42;
  d.runtime_version = "10.0.12";
  d.perf_maps = "enabled_by_profcpu";
  d.perf_map_configured = "1";
  d.events_bytes = 123456;
  d.events_dropped = {{"GCAllocationTick", 7, 700, 1000}, {"all", 3, 300, 2000}};
  auto out = std::get<DotnetRuntime>(RoundTrip(d));
  EXPECT_EQ(out.pid, 42u);
  EXPECT_EQ(out.runtime_version, "10.0.12");
  EXPECT_EQ(out.perf_maps, "enabled_by_profcpu");
  EXPECT_EQ(out.perf_map_configured, "1");
  EXPECT_EQ(out.events_bytes, 123456u);
  ASSERT_EQ(out.events_dropped.size(), 2u);
  EXPECT_EQ(out.events_dropped[0].kind, "GCAllocationTick");
  EXPECT_EQ(out.events_dropped[0].count, 7u);
  EXPECT_EQ(out.events_dropped[1].first_ns, 2000u);

  // A hostile count is refused before anything is allocated for it.
  std::string payload;
  base::ByteWriter w(&payload);
  w.U64(0);
  w.U32(42);
  for (int i = 0; i < 3; ++i) w.String("");
  w.U64(0);
  w.U32(0xffffffff);
  auto decoded = DecodeRecord(static_cast<uint32_t>(RecordType::kDotnetRuntime), payload);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
}

TEST(RecordCodecTest, TruncatedPayloadIsDataLoss) {
  Comm c;
  c.comm = "worker";
  std::string bytes;
  EncodeRecord(c, &bytes);
  auto out = DecodeRecord(static_cast<uint32_t>(RecordType::kComm),
                          absl::string_view(bytes).substr(kRecordPrefixSize, 10));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
}

TEST(RecordCodecTest, HugeCallchainCountIsRejected) {
  std::string payload;
  base::ByteWriter w(&payload);
  w.U64(0);
  w.U32(0);
  w.U32(0);
  w.U32(0);
  w.U64(0);
  w.U8(0);
  w.U32(0xFFFFFFFF);  // kernel ip count
  auto out = DecodeRecord(static_cast<uint32_t>(RecordType::kSample), payload);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
}

TEST(RecordCodecTest, BpfRecordsRoundTrip) {
  StackTrace t;
  t.time_ns = 5;
  t.id = 77;
  t.kernel = true;
  t.ips = {0xffffffff81000000ull, 0xffffffff81000123ull};
  auto to = std::get<StackTrace>(RoundTrip(t));
  EXPECT_EQ(to.id, 77u);
  EXPECT_TRUE(to.kernel);
  EXPECT_FALSE(to.truncated);
  EXPECT_EQ(to.ips, t.ips);

  OffCpuSample o;
  o.time_ns = 2'000'000;
  o.duration_ns = 1'500'000;
  o.pid = 3;
  o.tid = 4;
  o.state = 1;
  o.kernel_stack = 77;
  o.user_stack = kNoStack;
  auto oo = std::get<OffCpuSample>(RoundTrip(o));
  EXPECT_EQ(oo.duration_ns, 1'500'000u);
  EXPECT_EQ(oo.kernel_stack, 77);
  EXPECT_EQ(oo.user_stack, kNoStack);
  EXPECT_EQ(oo.state, 1u);
  EXPECT_TRUE(oo.user_regs.empty());
  EXPECT_TRUE(oo.user_stack_copy.empty());

  // -callgraph fp+cfi: the registers and stack copy at the switch-out.
  o.user_regs_abi = 2;
  o.user_regs = {0x7ffd0010, 0x7ffd0000, 0x401234};
  o.user_stack_copy = std::string("\x10\x20\0\0\0\0\0\0", 8);
  auto oc = std::get<OffCpuSample>(RoundTrip(o));
  EXPECT_EQ(oc.user_regs_abi, 2u);
  EXPECT_EQ(oc.user_regs, o.user_regs);
  EXPECT_EQ(oc.user_stack_copy, o.user_stack_copy);
  EXPECT_EQ(oc.user_stack, kNoStack);

  StackSample s;
  s.time_ns = 9;
  s.tid = 8;
  s.count = 1000;
  s.period = 1000 * 1010101ull;
  s.user_stack = 12;
  auto so = std::get<StackSample>(RoundTrip(s));
  EXPECT_EQ(so.count, 1000u);
  EXPECT_EQ(so.period, s.period);
  EXPECT_EQ(so.kernel_stack, kNoStack);
  EXPECT_EQ(so.user_stack, 12);
}

TEST(RecordCodecTest, HeaderWithoutModeFieldsReadsAsDefaults) {
  Header h;
  h.mode = "wall";
  h.backend = "bpf";
  EXPECT_EQ(std::get<Header>(RoundTrip(h)).mode, "wall");
  EXPECT_EQ(std::get<Header>(RoundTrip(h)).backend, "bpf");
  // A version-1 header as written before the fields were appended.
  std::string bytes;
  EncodeRecord(Header{}, &bytes);
  absl::string_view payload = absl::string_view(bytes).substr(kRecordPrefixSize);
  // Two empty strings (two u32 lengths), the DWARF fields (u64, u32), the
  // counting interval (u64).
  payload.remove_suffix(8 + 12 + 8);
  auto old = DecodeRecord(static_cast<uint32_t>(RecordType::kHeader), payload);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(std::get<Header>(*old).mode, "");
  EXPECT_EQ(std::get<Header>(*old).backend, "");
  EXPECT_EQ(std::get<Header>(*old).user_regs_mask, 0u);
  // Written with mode and backend but before the DWARF fields.
  old = DecodeRecord(static_cast<uint32_t>(RecordType::kHeader),
                     absl::string_view(bytes).substr(kRecordPrefixSize, bytes.size() -
                                                                             kRecordPrefixSize - 20));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(std::get<Header>(*old).user_stack_size, 0u);
  // Written before the counting interval: samples read as timed.
  old = DecodeRecord(static_cast<uint32_t>(RecordType::kHeader),
                     absl::string_view(bytes).substr(kRecordPrefixSize, bytes.size() -
                                                                             kRecordPrefixSize - 8));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(std::get<Header>(*old).counted_interval_ns, 0u);
}

TEST(RecordCodecTest, UnknownTypeIsNotFound) {
  EXPECT_EQ(DecodeRecord(999, "").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace profcpu::recording

namespace profcpu::recording {
namespace {

std::string PayloadOf(const Record& record) {
  std::string bytes;
  EncodeRecord(record, &bytes);
  return bytes.substr(kRecordPrefixSize);
}

// A sample decoded into the record that held another keeps nothing of it:
// no registers or stack copy when the new one has none, no stale frames.
TEST(RecordCodecTest, DecodingIntoAReusedSampleLeavesNothingOfTheLastOne) {
  Sample with_tail;
  with_tail.time_ns = 1;
  with_tail.kernel_ips = {1, 2, 3};
  with_tail.user_ips = {4, 5};
  with_tail.truncated = true;
  with_tail.user_regs_abi = 2;
  with_tail.user_regs = {7, 8, 9};
  with_tail.user_stack = "stack bytes";
  Sample plain;
  plain.time_ns = 2;
  plain.pid = plain.tid = 3;
  plain.user_ips = {6};

  Record record = Header{};
  const uint32_t type = static_cast<uint32_t>(RecordType::kSample);
  ASSERT_TRUE(DecodeRecordInto(type, PayloadOf(with_tail), &record).ok());
  EXPECT_EQ(std::get<Sample>(record).user_stack, "stack bytes");
  ASSERT_TRUE(DecodeRecordInto(type, PayloadOf(plain), &record).ok());
  const Sample& decoded = std::get<Sample>(record);
  EXPECT_EQ(decoded.time_ns, 2u);
  EXPECT_EQ(decoded.pid, 3u);
  EXPECT_TRUE(decoded.kernel_ips.empty());
  EXPECT_EQ(decoded.user_ips, std::vector<uint64_t>{6});
  EXPECT_FALSE(decoded.truncated);
  EXPECT_EQ(decoded.user_regs_abi, 0u);
  EXPECT_TRUE(decoded.user_regs.empty());
  EXPECT_TRUE(decoded.user_stack.empty());
  // Other kinds replace the record; a truncated sample is an error.
  Comm comm;
  comm.comm = "x";
  ASSERT_TRUE(
      DecodeRecordInto(static_cast<uint32_t>(RecordType::kComm), PayloadOf(comm), &record).ok());
  EXPECT_EQ(std::get<Comm>(record).comm, "x");
  const std::string cut = PayloadOf(with_tail).substr(0, 30);
  EXPECT_EQ(DecodeRecordInto(type, cut, &record).code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace profcpu::recording
