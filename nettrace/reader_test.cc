#include "nettrace/reader.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/byte_io.h"
#include "base/file_io.h"
#include "nettrace/cursor.h"
#include "nettrace/runtime_events.h"
#include "nettrace/test_writer.h"
#include "gtest/gtest.h"

namespace profcpu::nettrace {
namespace {

using testing_nettrace::BlockHeader;
using testing_nettrace::CompressedBlob;
using testing_nettrace::ExceptionPayload;
using testing_nettrace::GcAllocationTickPayload;
using testing_nettrace::GcStartPayload;
using testing_nettrace::MetadataPayload;
using testing_nettrace::SequencePointBody;
using testing_nettrace::StackBlockBody;
using testing_nettrace::Varint;
using testing_nettrace::Writer;

using Stack = std::vector<uint64_t>;

// An uncompressed blob starting at a 4-aligned position of its block.
std::string UncompressedBlob(uint32_t metadata_id, uint32_t seq, uint64_t thread, int64_t ts,
                             absl::string_view payload) {
  std::string b;
  base::ByteWriter w(&b);
  w.U32(static_cast<uint32_t>(76 + payload.size()));
  w.U32(metadata_id);
  w.U32(seq);
  w.U64(thread);
  w.U64(thread);
  w.U32(0);
  w.U32(0);
  w.I64(ts);
  b.append(32, '\0');
  w.U32(static_cast<uint32_t>(payload.size()));
  b.append(payload.data(), payload.size());
  while (b.size() % 4) b.push_back(0);
  return b;
}

// Metadata (GCStart v2, ExceptionThrown v1), one compressed event block of
// three events, a stack block, a sequence point, the end tag.
std::string CompressedStream() {
  Writer w;
  std::string meta = BlockHeader(true);
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(1, kDotNetRuntimeProvider, 1, "GCStart", 2));
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(2, kDotNetRuntimeProvider, 80, "", 1));
  w.Block("MetadataBlock", meta);
  std::string events = BlockHeader(true);
  // Everything given; then the same metadata, thread and size reused; then a
  // new thread, metadata and size, with both activity ids and sorted.
  events += CompressedBlob(0x1 | 0x2 | 0x4 | 0x8 | 0x80, 1, 4, 500, 501, 2000,
                           GcStartPayload(1, 2, 1));
  events += CompressedBlob(0x0, 0, 0, 0, 0, 500, GcStartPayload(2, 0, 1));
  events += CompressedBlob(0x1 | 0x4 | 0x10 | 0x20 | 0x40 | 0x80, 2, 0, 0, 777, 1000,
                           ExceptionPayload("MyApp.BadThing", "it broke"));
  w.Block("EventBlock", events);
  std::string stacks;
  base::ByteWriter sw(&stacks);
  sw.U32(1);  // first id
  sw.U32(2);  // count
  sw.U32(16);
  sw.U64(0x1000);
  sw.U64(0x2000);
  sw.U32(0);
  w.Block("StackBlock", stacks);
  std::string sp;
  base::ByteWriter pw(&sp);
  pw.I64(5000);
  pw.U32(1);
  pw.U64(500);
  pw.U32(3);
  w.Block("SPBlock", sp);
  w.End();
  return w.bytes();
}

// Every event of a stream; the reader stays alive for the events' metadata
// and payloads (views of `bytes`, which the caller keeps). An event's stack
// lives only until the next event: copied into `stacks`, its span cleared.
struct Parsed {
  std::unique_ptr<NettraceStringSource> source;
  std::unique_ptr<NettraceReader> reader;
  std::vector<NettraceEvent> events;
  std::vector<Stack> stacks;
  absl::Status status;
};

Parsed ReadAll(absl::string_view bytes, NettraceLimits limits = {}) {
  Parsed p;
  p.source = std::make_unique<NettraceStringSource>(bytes);
  p.reader = std::make_unique<NettraceReader>(p.source.get(), limits);
  NettraceEvent e;
  while (true) {
    auto more = p.reader->Next(&e);
    if (!more.ok()) {
      p.status = more.status();
      break;
    }
    if (!*more) break;
    p.stacks.emplace_back(e.stack.begin(), e.stack.end());
    e.stack = {};
    p.events.push_back(e);
  }
  return p;
}

// Two sequence-point stretches of stacks as the runtime writes them: ids
// from 1, each stack block before the events naming it, ids numbered again
// after the sequence point. Metadata: GCAllocationTick V4 (1) and
// ExceptionThrown V1 (2).
//   stacks 1 (no frames), 2 (three frames), 3 (one frame)
//   events: alloc @2, throw @3, alloc @1, alloc with stack id 0, alloc @9 (never defined)
//   stack 4 (two frames, in a block of its own)
//   events: alloc @4, alloc @2 (still held: no sequence point since)
//   sequence point; stack 1 (one frame, a new stack under an old id)
//   events: alloc @1, alloc @2 (forgotten at the sequence point)
const Stack kStack2 = {0x7f0000001010, 0x7f0000002020, 0x7f0000003030};
const Stack kStack3 = {0x7f0000004040};
const Stack kStack4 = {0x7f0000005050, 0x7f0000006060};
const Stack kStackAfter = {0x7f000000aaaa};

std::string StackStream(int32_t pointer_size = 8) {
  Writer w(pointer_size);
  std::string meta = BlockHeader(true);
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(1, kDotNetRuntimeProvider, 10, "GCAllocationTick", 4));
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(2, kDotNetRuntimeProvider, 80, "", 1));
  w.Block("MetadataBlock", meta);
  auto narrow = [pointer_size](Stack stack) {
    if (pointer_size == 4) {
      for (uint64_t& address : stack) address &= 0xffffffff;
    }
    return stack;
  };
  w.Block("StackBlock",
          StackBlockBody(1, {Stack{}, narrow(kStack2), narrow(kStack3)}, pointer_size));
  const std::string alloc =
      GcAllocationTickPayload(4, 100232, 0, "System.Byte[]", 0, 1048, pointer_size);
  constexpr uint8_t kFlags = 0x1 | 0x4 | 0x8 | 0x80;
  std::string events = BlockHeader(true);
  events += CompressedBlob(kFlags | 0x2, 1, 0, 501, 501, 1000, alloc, 2);
  events += CompressedBlob(kFlags, 2, 0, 0, 501, 10, ExceptionPayload("App.Bad", "m"), 3);
  events += CompressedBlob(kFlags, 1, 0, 0, 501, 10, alloc, 1);
  events += CompressedBlob(kFlags, 1, 0, 0, 502, 10, alloc, 0);
  events += CompressedBlob(kFlags, 1, 0, 0, 501, 10, alloc, 9);
  w.Block("EventBlock", events);
  w.Block("StackBlock", StackBlockBody(4, {narrow(kStack4)}, pointer_size));
  events = BlockHeader(true);
  events += CompressedBlob(kFlags | 0x2, 1, 0, 501, 501, 2000, alloc, 4);
  events += CompressedBlob(kFlags, 1, 0, 0, 501, 10, alloc, 2);
  w.Block("EventBlock", events);
  w.Block("SPBlock", SequencePointBody(5000));
  w.Block("StackBlock", StackBlockBody(1, {narrow(kStackAfter)}, pointer_size));
  events = BlockHeader(true);
  events += CompressedBlob(kFlags | 0x2, 1, 0, 501, 501, 6000, alloc, 1);
  events += CompressedBlob(kFlags, 1, 0, 0, 501, 10, alloc, 2);
  w.Block("EventBlock", events);
  w.End();
  return w.bytes();
}

// Saves a stream as a fuzz seed when NETTRACE_SEED_DIR is set.
void MaybeSaveSeed(absl::string_view name, absl::string_view bytes) {
  const char* dir = std::getenv("NETTRACE_SEED_DIR");
  if (dir != nullptr) {
    ASSERT_TRUE(base::WriteFile(absl::StrCat(dir, "/", name), bytes).ok());
  }
}

TEST(NettraceReaderTest, ReadsTheTraceObject) {
  std::string bytes = CompressedStream();
  NettraceStringSource source(bytes);
  NettraceReader reader(&source);
  ASSERT_TRUE(reader.ReadHeader().ok());
  const NettraceTraceInfo& t = reader.trace();
  EXPECT_EQ(t.version, 4);
  EXPECT_EQ(t.pointer_size, 8);
  EXPECT_EQ(t.process_id, 4242);
  EXPECT_EQ(t.processor_count, 2);
  EXPECT_EQ(t.qpc_frequency, 1000000000);
  EXPECT_EQ(absl::FormatTime("%Y-%m-%d %H:%M:%E3S", t.sync_time, absl::UTCTimeZone()),
            "2026-11-25 03:30:15.250");
  EXPECT_EQ(reader.ToTime(1000 + 1500000000) - t.sync_time, absl::Milliseconds(1500));
}

TEST(NettraceReaderTest, DecodesCompressedHeadersAndEveryBlock) {
  std::string bytes = CompressedStream();
  MaybeSaveSeed("compressed", bytes);
  Parsed parsed = ReadAll(bytes);
  ASSERT_TRUE(parsed.status.ok()) << parsed.status;
  const std::vector<NettraceEvent>& events = parsed.events;
  NettraceReader* reader = parsed.reader.get();
  ASSERT_EQ(events.size(), 3u);

  EXPECT_EQ(events[0].metadata->provider, kDotNetRuntimeProvider);
  EXPECT_EQ(events[0].metadata->event_id, 1u);
  EXPECT_EQ(events[0].metadata->version, 2u);
  EXPECT_EQ(events[0].metadata->event_name, "GCStart");
  EXPECT_EQ(events[0].sequence_number, 5u);  // delta 4, plus one
  EXPECT_EQ(events[0].capture_thread_id, 500u);
  EXPECT_EQ(events[0].thread_id, 501u);
  EXPECT_EQ(events[0].processor, 1u);
  EXPECT_EQ(events[0].stack_id, 7u);
  EXPECT_EQ(events[0].timestamp, 2000);
  EXPECT_FALSE(events[0].sorted);

  // Everything but the timestamp carried over, the sequence number counted.
  EXPECT_EQ(events[1].metadata, events[0].metadata);
  EXPECT_EQ(events[1].thread_id, 501u);
  EXPECT_EQ(events[1].sequence_number, 6u);
  EXPECT_EQ(events[1].timestamp, 2500);
  EXPECT_EQ(events[1].payload.size(), events[0].payload.size());
  auto gc = DecodeGcStart(events[1].payload, events[1].metadata->version);
  ASSERT_TRUE(gc.ok()) << gc.status();
  EXPECT_EQ(gc->count, 2u);
  EXPECT_EQ(gc->reason, 1u);
  EXPECT_EQ(gc->client_sequence_number, 99u);

  EXPECT_EQ(events[2].metadata->event_id, 80u);
  EXPECT_EQ(events[2].thread_id, 777u);
  EXPECT_EQ(events[2].timestamp, 3500);
  EXPECT_TRUE(events[2].sorted);
  EXPECT_EQ(events[2].activity_id[0], 0xaa);
  EXPECT_EQ(events[2].related_activity_id[15], 0xbb);
  auto ex = DecodeExceptionThrown(events[2].payload, 1, 8);
  ASSERT_TRUE(ex.ok()) << ex.status();
  EXPECT_EQ(ex->type, "MyApp.BadThing");
  EXPECT_EQ(ex->message, "it broke");
  EXPECT_EQ(ex->hresult, 0x80131500u);

  const NettraceCounts& c = reader->counts();
  EXPECT_EQ(c.metadata_blocks, 1u);
  EXPECT_EQ(c.event_blocks, 1u);
  EXPECT_EQ(c.stack_blocks, 1u);
  EXPECT_EQ(c.stacks, 2u);
  // Every event names stack 7, which no block before them defined.
  EXPECT_EQ(c.events_stack_unknown, 3u);
  EXPECT_EQ(c.sequence_points, 1u);
  EXPECT_EQ(c.metadata, 2u);
  EXPECT_EQ(c.events, 3u);
  // The end stays the end.
  NettraceEvent e;
  auto more = reader->Next(&e);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
}

TEST(NettraceReaderTest, EachEventHasTheStackItsIdNames) {
  std::string bytes = StackStream();
  MaybeSaveSeed("stacks", bytes);
  Parsed parsed = ReadAll(bytes);
  ASSERT_TRUE(parsed.status.ok()) << parsed.status;
  ASSERT_EQ(parsed.events.size(), 9u);
  const std::vector<Stack>& stacks = parsed.stacks;
  EXPECT_EQ(stacks[0], kStack2);  // leaf first, as the block lists it
  EXPECT_EQ(stacks[1], kStack3);
  EXPECT_EQ(stacks[2], Stack{});  // a stack without frames
  EXPECT_EQ(parsed.events[3].stack_id, 0u);
  EXPECT_EQ(stacks[3], Stack{});  // no stack
  EXPECT_EQ(parsed.events[4].stack_id, 9u);
  EXPECT_EQ(stacks[4], Stack{});  // never defined
  EXPECT_EQ(stacks[5], kStack4);  // from a later block
  EXPECT_EQ(stacks[6], kStack2);  // held across blocks
  EXPECT_EQ(stacks[7], kStackAfter);  // id 1 again after the sequence point
  EXPECT_EQ(stacks[8], Stack{});      // id 2 forgotten at the sequence point

  auto alloc = DecodeGcAllocationTick(parsed.events[0].payload,
                                      parsed.events[0].metadata->version, 8);
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  EXPECT_EQ(alloc->type_name, "System.Byte[]");
  EXPECT_EQ(alloc->amount, 100232u);

  const NettraceCounts& c = parsed.reader->counts();
  EXPECT_EQ(c.stack_blocks, 3u);
  EXPECT_EQ(c.stacks, 5u);
  EXPECT_EQ(c.stacks_not_kept, 0u);
  EXPECT_EQ(c.sequence_points, 1u);
  EXPECT_EQ(c.events, 9u);
  EXPECT_EQ(c.events_stack_unknown, 2u);  // ids 9, and 2 after the sequence point
}

TEST(NettraceReaderTest, FourByteAddressesAreWidened) {
  std::string bytes = StackStream(4);
  MaybeSaveSeed("stacks32", bytes);
  Parsed parsed = ReadAll(bytes);
  ASSERT_TRUE(parsed.status.ok()) << parsed.status;
  ASSERT_EQ(parsed.events.size(), 9u);
  EXPECT_EQ(parsed.stacks[0], (Stack{0x1010, 0x2020, 0x3030}));
  EXPECT_EQ(parsed.stacks[5], (Stack{0x5050, 0x6060}));
  EXPECT_EQ(parsed.stacks[7], Stack{0xaaaa});
  auto alloc = DecodeGcAllocationTick(parsed.events[0].payload, 4, 4);
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  EXPECT_EQ(alloc->type_name, "System.Byte[]");
  EXPECT_EQ(alloc->object_size, 1048u);
  EXPECT_EQ(parsed.reader->counts().events_stack_unknown, 2u);
}

TEST(NettraceReaderTest, StacksPastTheBudgetAreNotKept) {
  // Stack 1 (an entry, 8 bytes) and stack 2 (8 + 3 addresses) fit in 40
  // bytes; stack 3 does not, nor stack 4 after it. After the sequence point
  // the budget is whole again.
  NettraceLimits limits;
  limits.max_stack_bytes = 40;
  Parsed parsed = ReadAll(StackStream(), limits);
  ASSERT_TRUE(parsed.status.ok()) << parsed.status;
  ASSERT_EQ(parsed.events.size(), 9u);
  EXPECT_EQ(parsed.stacks[0], kStack2);
  EXPECT_EQ(parsed.stacks[1], Stack{});
  EXPECT_EQ(parsed.stacks[5], Stack{});
  EXPECT_EQ(parsed.stacks[6], kStack2);
  EXPECT_EQ(parsed.stacks[7], kStackAfter);
  const NettraceCounts& c = parsed.reader->counts();
  EXPECT_EQ(c.stacks, 5u);
  EXPECT_EQ(c.stacks_not_kept, 2u);
  EXPECT_EQ(c.events_stack_unknown, 4u);  // stacks 3, 9, 4, and 2 after the sequence point

  limits.max_stack_bytes = 0;  // a reader that wants none
  parsed = ReadAll(StackStream(), limits);
  ASSERT_TRUE(parsed.status.ok()) << parsed.status;
  for (const Stack& stack : parsed.stacks) EXPECT_TRUE(stack.empty());
  EXPECT_EQ(parsed.reader->counts().stacks_not_kept, 5u);
  EXPECT_EQ(parsed.reader->counts().events_stack_unknown, 8u);  // all but stack id 0
}

TEST(NettraceReaderTest, DecodesUncompressedBlocksWithPadding) {
  Writer w;
  std::string meta = BlockHeader(false);
  meta += UncompressedBlob(0, 0, 0, 0, MetadataPayload(3, "My-Provider", 12, "Tick", 0));
  w.Block("MetadataBlock", meta);
  std::string events = BlockHeader(false);
  events += UncompressedBlob(3 | 0x80000000u, 10, 33, 7000, "abc");  // padded to 4
  events += UncompressedBlob(3, 11, 34, 8000, "");
  w.Block("EventBlock", events);
  w.End();
  MaybeSaveSeed("uncompressed", w.bytes());
  Parsed parsed = ReadAll(w.bytes());
  ASSERT_TRUE(parsed.status.ok()) << parsed.status;
  const std::vector<NettraceEvent>& got = parsed.events;
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].metadata->provider, "My-Provider");
  EXPECT_EQ(got[0].metadata->event_name, "Tick");
  EXPECT_EQ(got[0].payload, "abc");
  EXPECT_TRUE(got[0].sorted);
  EXPECT_EQ(got[0].sequence_number, 10u);
  EXPECT_EQ(got[0].thread_id, 33u);
  EXPECT_EQ(got[1].payload, "");
  EXPECT_EQ(got[1].timestamp, 8000);
  EXPECT_FALSE(got[1].sorted);
}

TEST(NettraceReaderTest, EveryTruncationIsAnErrorNamingAnOffset) {
  for (const std::string& bytes : {CompressedStream(), StackStream()}) {
    for (size_t n = 0; n < bytes.size(); ++n) {
      absl::Status status = ReadAll(absl::string_view(bytes).substr(0, n)).status;
      ASSERT_FALSE(status.ok()) << "prefix of " << n << " bytes";
      EXPECT_TRUE(absl::StrContains(status.message(), "nettrace offset")) << status;
    }
  }
}

TEST(NettraceReaderTest, ClearErrors) {
  struct Case {
    std::string name;
    std::string bytes;
    std::string expected;
  };
  std::vector<Case> cases;
  cases.push_back({"magic", "Netwhat?" + CompressedStream().substr(8), "no \"Nettrace\" magic"});
  cases.push_back({"netperf", std::string("\x14\0\0\0!FastSerialization.1", 24), "NetPerf"});
  {
    Writer w;
    w.Block("Unheard", "");
    cases.push_back({"unknown object", w.bytes(), "unknown type \"Unheard\""});
  }
  {
    Writer w;
    w.Block("EventBlock", BlockHeader(true), 3);
    cases.push_back({"future block version", w.bytes(), "needs a reader of version 3"});
  }
  {
    Writer w;
    std::string events = BlockHeader(true);
    events += CompressedBlob(0x81, 9, 0, 0, 0, 1, "x");
    w.Block("EventBlock", events);
    cases.push_back({"undefined metadata", w.bytes(), "metadata id 9 that no metadata record"});
  }
  {
    Writer w;
    std::string events = BlockHeader(true);
    events += "\x80\x01\x64";  // payload of 100 bytes, none there
    w.Block("EventBlock", events);
    cases.push_back({"payload past block", w.bytes(), "an event's payload needs 100 bytes"});
  }
  {
    Writer w;
    std::string events = BlockHeader(true);
    events += std::string("\x00", 1) + std::string(11, '\xff');
    w.Block("EventBlock", events);
    cases.push_back({"long varint", w.bytes(), "longer than 10 bytes"});
  }
  {
    Writer w;
    w.BlockSizeOnly("EventBlock", 0x7fffffff);
    std::string huge = w.bytes();
    cases.push_back({"block over the cap", huge, "at most"});
  }
  {
    Writer w;
    std::string body = BlockHeader(true);
    w.Block("EventBlock", body);
    std::string bytes = w.bytes();
    bytes.back() = 9;  // the block's end tag
    cases.push_back({"bad end tag", bytes, "expected the end of a block object"});
  }
  {
    Writer w;
    w.Block("MetadataBlock", BlockHeader(true) + CompressedBlob(0x80, 0, 0, 0, 0, 0,
                                                                std::string("\x01\0\0\0M\0", 6)));
    cases.push_back({"unterminated name", w.bytes(), "no NUL terminator"});
  }
  {
    Writer w;
    std::string stacks;
    base::ByteWriter sw(&stacks);
    sw.U32(1);
    sw.U32(1000000);
    w.Block("StackBlock", stacks);
    cases.push_back({"stack count", w.bytes(), "1000000 stacks"});
  }
  {
    Writer w;
    std::string stacks;
    base::ByteWriter sw(&stacks);
    sw.U32(1);
    sw.U32(1);
    sw.U32(12);  // one and a half addresses
    sw.U64(0x1000);
    sw.U32(0);
    w.Block("StackBlock", stacks);
    cases.push_back(
        {"stack size", w.bytes(), "a stack of 12 bytes, not a whole number of 8-byte addresses"});
  }
  {
    Writer w;
    w.Block("EventBlock", std::string("\x04\0\0\0", 4));
    cases.push_back({"short block header", w.bytes(), "header of 4 bytes"});
  }
  {
    Writer w(3);
    // 8 magic, 24 header, the Trace object's tag and 21-byte type: fields
    // at 53, the pointer size 32 bytes in.
    cases.push_back({"pointer size", w.bytes(), "nettrace offset 85: pointer size 3"});
  }
  for (const Case& c : cases) {
    absl::Status status = ReadAll(c.bytes).status;
    EXPECT_FALSE(status.ok()) << c.name;
    EXPECT_TRUE(absl::StrContains(status.message(), c.expected))
        << c.name << ": " << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "nettrace offset")) << c.name << ": " << status;
  }
}

TEST(NettraceReaderTest, StreamWithoutEndTagIsAnError) {
  std::string bytes = CompressedStream();
  bytes.pop_back();
  Parsed parsed = ReadAll(bytes);
  absl::Status status = parsed.status;
  EXPECT_EQ(parsed.events.size(), 3u);  // what came before is still read
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "the stream ends inside")) << status;
}

TEST(NettraceReaderTest, BlockCapIsTheCallersChoice) {
  std::string bytes = CompressedStream();
  NettraceStringSource source(bytes);
  NettraceLimits limits;
  limits.max_block_bytes = 16;
  NettraceReader reader(&source, limits);
  NettraceEvent e;
  auto more = reader.Next(&e);
  ASSERT_FALSE(more.ok());
  EXPECT_TRUE(absl::StrContains(more.status().message(), "(at most 16)")) << more.status();
}


// Hands out at most `piece` bytes per Read and remembers what it was asked:
// how many Reads, and the most room a Read offered (the reader's buffer).
class CountingSource : public NettraceSource {
 public:
  CountingSource(absl::string_view bytes, size_t piece) : bytes_(bytes), piece_(piece) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    ++reads;
    largest_ask = std::max(largest_ask, n);
    n = std::min({n, bytes_.size(), piece_});
    std::copy(bytes_.data(), bytes_.data() + n, buffer);
    bytes_.remove_prefix(n);
    given += n;
    return n;
  }
  size_t reads = 0;
  size_t largest_ask = 0;
  size_t given = 0;

 private:
  absl::string_view bytes_;
  size_t piece_;
};

std::vector<std::string> Summaries(NettraceSource* source, absl::Status* status) {
  NettraceReader reader(source);
  std::vector<std::string> out;
  NettraceEvent e;
  while (true) {
    auto more = reader.Next(&e);
    if (!more.ok()) {
      *status = more.status();
      break;
    }
    if (!*more) break;
    std::string stack;
    for (uint64_t address : e.stack) absl::StrAppend(&stack, " ", address);
    out.push_back(absl::StrCat(e.metadata->metadata_id, "@", e.offset, " t", e.thread_id, " ",
                               e.timestamp, " ", e.payload, stack));
  }
  return out;
}

TEST(NettraceReaderTest, AnyPieceSizeReadsTheSameEvents) {
  const std::string bytes = StackStream();
  absl::Status whole_status;
  NettraceStringSource whole(bytes);
  const std::vector<std::string> expected = Summaries(&whole, &whole_status);
  ASSERT_TRUE(whole_status.ok()) << whole_status;
  ASSERT_EQ(expected.size(), 9u);
  for (size_t piece : {1, 2, 3, 7, 255, 256, 257, 4096}) {
    CountingSource source(bytes, piece);
    absl::Status status;
    EXPECT_EQ(Summaries(&source, &status), expected) << piece;
    EXPECT_TRUE(status.ok()) << piece << ": " << status;
  }
}

TEST(NettraceReaderTest, MemoryFollowsTheBytesSentNotTheBlockCap) {
  // A block that claims 15 MiB (under the 16 MiB cap) and sends 100 bytes:
  // the reader's buffers grow with what arrives, not to the claim.
  Writer w;
  w.BlockSizeOnly("EventBlock", 15 << 20);
  std::string bytes = w.bytes();
  while (bytes.size() % 4) bytes.push_back(0);
  bytes.append(100, 'x');
  CountingSource source(bytes, bytes.size());
  absl::Status status;
  Summaries(&source, &status);
  EXPECT_TRUE(absl::StrContains(status.message(), "the stream ends inside EventBlock (100 of "))
      << status;
  EXPECT_EQ(source.given, bytes.size());
  EXPECT_LE(source.largest_ask, 2 * bytes.size() + 4096);
}

TEST(NettraceReaderTest, SmallBlocksCostNoReadEach) {
  // 2000 sequence points: each block's framing is a dozen small fields,
  // read through the read-ahead, not one Read (a read(2)) each.
  Writer w;
  for (int i = 0; i < 2000; ++i) w.Block("SPBlock", SequencePointBody(i));
  w.End();
  CountingSource source(w.bytes(), w.bytes().size());
  absl::Status status;
  EXPECT_TRUE(Summaries(&source, &status).empty());
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(source.given, w.bytes().size());
  EXPECT_LE(source.reads, w.bytes().size() / (32 << 10) + 16) << w.bytes().size() << " bytes";
}

TEST(NettraceCursorTest, Utf16zReadsAsciiAndOtherNames) {
  // "Ab", then U+00E9 and U+1F600 (a surrogate pair), then no terminator.
  const std::string bytes = std::string("A\0b\0\0\0", 6) +
                            std::string("\xe9\0\x3d\xd8\x00\xde\0\0", 8) +
                            std::string("C\0", 2);
  NettraceCursor c(bytes, 100);
  std::string s = "a longer name read before";
  ASSERT_TRUE(c.Utf16z(&s, "a name").ok());
  EXPECT_EQ(s, "Ab");
  ASSERT_TRUE(c.Utf16z(&s, "a name").ok());
  EXPECT_EQ(s, "\xc3\xa9\xf0\x9f\x98\x80");
  absl::Status end = c.Utf16z(&s, "a name");
  EXPECT_TRUE(absl::StrContains(end.message(), "nettrace offset 114: a name has no NUL")) << end;
}

}  // namespace
}  // namespace profcpu::nettrace
