#include "nettrace/runtime_events.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "base/byte_io.h"
#include "nettrace/test_writer.h"
#include "gtest/gtest.h"

namespace profcpu::nettrace {
namespace {

using testing_nettrace::ExceptionPayload;
using testing_nettrace::GcAllocationTickPayload;
using testing_nettrace::GcStartPayload;
using testing_nettrace::Utf16z;

TEST(RuntimePayloadTest, Decoders) {
  std::string p;
  base::ByteWriter w(&p);
  w.U8(0);
  w.U16(7);
  double ns = 1234.5;
  uint64_t bits;
  std::memcpy(&bits, &ns, 8);
  w.U64(bits);
  auto stop = DecodeContentionStop(p, 1);
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_EQ(stop->duration_ns, 1234.5);
  EXPECT_FALSE(DecodeContentionStop(p.substr(0, 5), 1).ok());
  EXPECT_TRUE(DecodeContentionStop(p.substr(0, 3), 0).ok());

  std::string m;
  base::ByteWriter mw(&m);
  mw.U64(1);
  mw.U64(2);
  mw.U64(0x7f0000001000);
  mw.U32(64);
  mw.U32(0x06000001);
  mw.U32(0);
  Utf16z(mw, "MyApp.Program");
  Utf16z(mw, "Main");
  Utf16z(mw, "void  (string[])");
  mw.U16(7);
  mw.U64(0);
  auto method = DecodeMethodLoadVerbose(m, 2);
  ASSERT_TRUE(method.ok()) << method.status();
  EXPECT_EQ(method->start_address, 0x7f0000001000u);
  EXPECT_EQ(method->size, 64u);
  EXPECT_EQ(method->method_namespace, "MyApp.Program");
  EXPECT_EQ(method->name, "Main");
  EXPECT_EQ(method->signature, "void  (string[])");
  auto cut = DecodeMethodLoadVerbose(m.substr(0, 40), 2);
  ASSERT_FALSE(cut.ok());
  EXPECT_TRUE(absl::StrContains(cut.status().message(), "MethodLoadVerbose payload of 40 bytes"))
      << cut.status();

  std::string a;
  base::ByteWriter aw(&a);
  double throughput = 12.5;
  std::memcpy(&bits, &throughput, 8);
  aw.U64(bits);
  aw.U32(9);
  aw.U32(6);
  auto adjustment = DecodeThreadPoolAdjustment(a, 0);
  ASSERT_TRUE(adjustment.ok()) << adjustment.status();
  EXPECT_EQ(adjustment->average_throughput, 12.5);
  EXPECT_EQ(adjustment->new_worker_thread_count, 9u);
  EXPECT_EQ(adjustment->reason, 6u);
  EXPECT_FALSE(DecodeThreadPoolAdjustment(a.substr(0, 12), 0).ok());
  auto worker = DecodeThreadPoolWorkerThread(a.substr(8), 0);
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_EQ(worker->active_worker_thread_count, 9u);
  EXPECT_EQ(worker->retired_worker_thread_count, 6u);

  auto gc = DecodeGcStart(GcStartPayload(5, 2, 0).substr(0, 8), 0);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->count, 5u);
  EXPECT_EQ(gc->reason, 2u);  // version 0: count, reason
  EXPECT_FALSE(DecodeGcStart("", 2).ok());
  EXPECT_FALSE(DecodeExceptionThrown(ExceptionPayload("T", "M"), 0, 8).ok());
}

TEST(RuntimePayloadTest, GcAllocationTickEveryVersion) {
  for (int32_t pointer_size : {8, 4}) {
    for (uint32_t version = 0; version <= 4; ++version) {
      SCOPED_TRACE(testing::Message() << "V" << version << " pointer " << pointer_size);
      // Past 4 GB the 32-bit amount wraps: V2+ carry the 64-bit one.
      const uint64_t amount = version >= 2 ? 0x100018000 : 0x18000;
      const std::string p =
          GcAllocationTickPayload(version, amount, 2, "App.Node[]", 3, 4120, pointer_size);
      auto tick = DecodeGcAllocationTick(p, version, pointer_size);
      ASSERT_TRUE(tick.ok()) << tick.status();
      EXPECT_EQ(tick->amount, amount);
      EXPECT_EQ(tick->kind, 2u);
      EXPECT_EQ(tick->type_name, version >= 2 ? "App.Node[]" : "");
      EXPECT_EQ(tick->heap_index, version >= 2 ? 3u : 0u);
      EXPECT_EQ(tick->type_id, version >= 2 ? (pointer_size == 8 ? 0x7f00aa000010u : 0xaa000010u)
                                            : 0u);
      EXPECT_EQ(tick->address, version >= 3 ? (pointer_size == 8 ? 0x7e0000001000u : 0x1000u)
                                            : 0u);
      EXPECT_EQ(tick->object_size, version >= 4 ? 4120u : 0u);
      // Every cut of the layout is an error naming the event.
      for (size_t n = 0; n < p.size(); ++n) {
        auto cut = DecodeGcAllocationTick(p.substr(0, n), version, pointer_size);
        ASSERT_FALSE(cut.ok()) << n;
        EXPECT_TRUE(absl::StrContains(cut.status().message(), "GCAllocationTick payload"))
            << cut.status();
      }
    }
  }
}

TEST(RuntimePayloadTest, GcAllocationTickTypeNameIsUtf8) {
  std::string p;
  base::ByteWriter w(&p);
  w.U32(100);
  w.U32(0);
  w.U16(7);
  w.U64(100);
  w.U64(0x1234);
  const uint16_t units[] = {'A', '.', 'C', 'a', 'f', 0xe9, 0};  // "A.Café"
  for (uint16_t unit : units) w.U16(unit);
  w.U32(0);
  auto tick = DecodeGcAllocationTick(p, 2, 8);
  ASSERT_TRUE(tick.ok()) << tick.status();
  EXPECT_EQ(tick->type_name, "A.Caf\xc3\xa9");
  EXPECT_EQ(static_cast<uint32_t>(RuntimeEventId::kGcAllocationTick), 10u);
}

}  // namespace
}  // namespace profcpu::nettrace
