#include "nettrace/stream_filter.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nettrace/reader.h"
#include "nettrace/runtime_events.h"
#include "nettrace/source.h"
#include "nettrace/test_writer.h"

namespace profcpu::nettrace {
namespace {

using testing_nettrace::BlockHeader;
using testing_nettrace::CompressedBlob;
using testing_nettrace::GcStartPayload;
using testing_nettrace::MetadataPayload;
using testing_nettrace::Writer;

// GCStart (id 1, metadata 1) and GCAllocationTick (id 10, metadata 2), one
// compressed block of six events on two threads, alternating kinds, each
// header compressed against the one before (so dropping one changes how the
// next must be written), then a second block of allocation ticks only.
std::string Stream() {
  Writer w;
  std::string meta = BlockHeader(true);
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(1, kDotNetRuntimeProvider, 1, "GCStart", 2));
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(2, kDotNetRuntimeProvider, 10, "", 4));
  w.Block("MetadataBlock", meta);
  std::string events = BlockHeader(true);
  events += CompressedBlob(0x1 | 0x2 | 0x4 | 0x80, 1, 4, 500, 501, 2000, GcStartPayload(1, 2, 1));
  events += CompressedBlob(0x1 | 0x80, 2, 0, 0, 0, 10, "tick-1");
  events += CompressedBlob(0x1 | 0x80, 1, 0, 0, 0, 10, GcStartPayload(2, 0, 1));
  events += CompressedBlob(0x1 | 0x4 | 0x80, 2, 0, 0, 777, 10, "tick-22");
  events += CompressedBlob(0x0, 0, 0, 0, 0, 10, "tick-33");
  events += CompressedBlob(0x1 | 0x4 | 0x80, 1, 0, 0, 501, 10, GcStartPayload(3, 1, 0));
  w.Block("EventBlock", events);
  std::string ticks = BlockHeader(true);
  ticks += CompressedBlob(0x1 | 0x4 | 0x80, 2, 0, 0, 777, 3000, "tick-4");
  w.Block("EventBlock", ticks);
  w.End();
  return w.bytes();
}

struct Read {
  std::vector<NettraceEvent> events;
  std::vector<std::string> payloads;
  std::vector<uint32_t> ids;
  absl::Status status;
};

Read ReadAll(const std::string& bytes) {
  NettraceStringSource source(bytes);
  NettraceReader reader(&source);
  Read r;
  NettraceEvent e;
  while (true) {
    auto more = reader.Next(&e);
    if (!more.ok()) {
      r.status = more.status();
      break;
    }
    if (!*more) break;
    r.events.push_back(e);
    r.payloads.emplace_back(e.payload);
    r.ids.push_back(e.metadata->event_id);
  }
  return r;
}

// Feeds `bytes` in chunks of `chunk` bytes.
std::string Filter(const std::string& bytes, size_t chunk, NettraceStreamFilter* filter) {
  std::string out;
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    EXPECT_TRUE(filter->Feed(absl::string_view(bytes).substr(at, chunk), &out).ok());
  }
  return out;
}

TEST(NettraceStreamFilterTest, KeepingEverythingChangesNoByte) {
  const std::string in = Stream();
  NettraceStreamFilter filter([](const auto&, const auto&, size_t, uint64_t) { return true; });
  EXPECT_EQ(Filter(in, 7, &filter), in);
  EXPECT_TRUE(filter.ended());
  EXPECT_EQ(filter.events_kept(), 7u);
  EXPECT_EQ(filter.events_dropped(), 0u);
}

// Blocks passed whole are told by size (a byte budget counts them): here the
// one metadata block, never the event blocks.
TEST(NettraceStreamFilterTest, BlocksPassedWholeAreToldBySize) {
  const std::string in = Stream();
  NettraceStreamFilter filter([](const auto&, const auto&, size_t, uint64_t) { return false; });
  std::vector<size_t> passed;
  filter.set_on_pass([&passed](size_t bytes) { passed.push_back(bytes); });
  Filter(in, 5, &filter);
  ASSERT_EQ(passed.size(), 1u);
  EXPECT_GT(passed[0], 0u);
  EXPECT_LT(passed[0], in.size());
}

TEST(NettraceStreamFilterTest, DroppedEventsLeaveTheOthersExactlyAsTheyWere) {
  const std::string in = Stream();
  const Read before = ReadAll(in);
  ASSERT_TRUE(before.status.ok()) << before.status;
  ASSERT_EQ(before.events.size(), 7u);
  for (size_t chunk : {size_t{1}, size_t{13}, in.size()}) {
    std::vector<uint64_t> asked_times;
    NettraceStreamFilter filter(
        [&](const NettraceEventMetadata& m, const NettraceEvent&, size_t bytes, uint64_t ns) {
          EXPECT_GT(bytes, 0u);
          asked_times.push_back(ns);
          return m.event_id != 10;  // no GCAllocationTick
        });
    const std::string out = Filter(in, chunk, &filter);
    EXPECT_TRUE(filter.ended());
    EXPECT_EQ(filter.events_dropped(), 4u);
    EXPECT_LT(out.size(), in.size());
    const Read after = ReadAll(out);
    ASSERT_TRUE(after.status.ok()) << after.status;
    ASSERT_EQ(after.events.size(), 3u) << chunk;
    size_t n = 0;
    for (size_t i = 0; i < before.events.size(); ++i) {
      if (before.ids[i] == 10) continue;
      const NettraceEvent& a = before.events[i];
      const NettraceEvent& b = after.events[n];
      EXPECT_EQ(after.ids[n], 1u);
      EXPECT_EQ(b.timestamp, a.timestamp);
      EXPECT_EQ(b.thread_id, a.thread_id);
      EXPECT_EQ(b.capture_thread_id, a.capture_thread_id);
      EXPECT_EQ(b.sequence_number, a.sequence_number);
      EXPECT_EQ(b.processor, a.processor);
      EXPECT_EQ(after.payloads[n], before.payloads[i]);
      ++n;
    }
    // The trace's clock is nanoseconds: times are the events' own.
    ASSERT_EQ(asked_times.size(), 7u);
    EXPECT_EQ(asked_times[0], static_cast<uint64_t>(before.events[0].timestamp));
  }
}

TEST(NettraceStreamFilterTest, DamageIsAnErrorThatStays) {
  std::string in = Stream();
  in[33] = 'X';  // the Trace object's type
  NettraceStreamFilter filter([](const auto&, const auto&, size_t, uint64_t) { return true; });
  std::string out;
  EXPECT_EQ(filter.Feed(in, &out).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(filter.Feed("more", &out).code(), absl::StatusCode::kDataLoss);
}

TEST(NettraceStreamFilterTest, AHugeBlockSizeIsRefusedWithoutWaitingForIt) {
  Writer w;
  w.BlockSizeOnly("EventBlock", 0x7fffffff);
  NettraceStreamFilter filter([](const auto&, const auto&, size_t, uint64_t) { return true; },
                              /*max_block_bytes=*/1 << 20);
  std::string out;
  EXPECT_EQ(filter.Feed(w.bytes(), &out).code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace profcpu::nettrace
