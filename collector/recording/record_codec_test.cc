#include "collector/recording/record_codec.h"

#include <string>

#include "collector/base/byte_io.h"
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
  auto ho = std::get<Header>(RoundTrip(h));
  EXPECT_EQ(ho.event_name, "cpu-clock");
  EXPECT_EQ(ho.sample_rate, 99u);
  EXPECT_EQ(ho.boot_id, "abc");
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

TEST(RecordCodecTest, UnknownTypeIsNotFound) {
  EXPECT_EQ(DecodeRecord(999, "").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace profcpu::recording
