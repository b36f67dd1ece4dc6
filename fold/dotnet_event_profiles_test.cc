#include "fold/dotnet_event_profiles.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/byte_io.h"
#include "base/file_io.h"
#include "base/run_log.h"
#include "nettrace/blocks.h"
#include "nettrace/event.h"
#include "nettrace/runtime_events.h"
#include "nettrace/test_writer.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using nettrace::kDotNetRuntimeProvider;
using nettrace::testing_nettrace::BlockHeader;
using nettrace::testing_nettrace::CompressedBlob;
using nettrace::testing_nettrace::ExceptionPayload;
using nettrace::testing_nettrace::MetadataPayload;
using nettrace::testing_nettrace::Utf16z;
using nettrace::testing_nettrace::Writer;
using symbolize::CodeKind;
using symbolize::CodeLocation;

// Metadata ids of the streams below.
constexpr uint32_t kAllocTick = 1;       // GCAllocationTick V4
constexpr uint32_t kContentionStart = 2;  // V2
constexpr uint32_t kContentionStopV1 = 3;  // with its duration
constexpr uint32_t kContentionStopV0 = 4;  // without
constexpr uint32_t kException = 5;       // ExceptionThrown V1
constexpr uint32_t kOtherProvider = 6;

std::string AllocTickPayload(uint64_t amount, absl::string_view type, uint32_t kind = 0) {
  std::string p;
  base::ByteWriter w(&p);
  w.U32(static_cast<uint32_t>(amount));  // AllocationAmount (32-bit, saturated by the runtime)
  w.U32(kind);
  w.U16(7);           // ClrInstanceID
  w.U64(amount);      // AllocationAmount64
  w.U64(0xabc0);      // TypeID
  Utf16z(w, type);
  w.U32(0);           // HeapIndex
  w.U64(0x7f0000);    // Address
  w.U64(24);          // ObjectSize
  return p;
}

std::string ContentionStartPayload() {
  std::string p;
  base::ByteWriter w(&p);
  w.U8(0);
  w.U16(7);
  w.U64(0x1111);  // LockID
  w.U64(0x2222);  // AssociatedObjectID
  w.U64(99);      // LockOwnerThreadID
  return p;
}

std::string ContentionStopPayload(double duration_ns) {
  std::string p;
  base::ByteWriter w(&p);
  w.U8(0);
  w.U16(7);
  if (duration_ns >= 0 || duration_ns != duration_ns) {
    uint64_t bits;
    std::memcpy(&bits, &duration_ns, 8);
    w.U64(bits);
  }
  return p;
}

// A stream as the runtime writes it: metadata, then stack blocks, event
// blocks and sequence points in the order the test adds them.
class StreamBuilder {
 public:
  StreamBuilder() {
    std::string meta = BlockHeader(true);
    for (auto [id, event, name, version] :
         {std::tuple{kAllocTick, 10u, "GCAllocationTick", 4u},
          std::tuple{kContentionStart, 81u, "ContentionStart", 2u},
          std::tuple{kContentionStopV1, 91u, "ContentionStop", 1u},
          std::tuple{kContentionStopV0, 91u, "ContentionStop", 0u},
          std::tuple{kException, 80u, "ExceptionThrown", 1u}}) {
      meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                             MetadataPayload(id, kDotNetRuntimeProvider, event, name, version));
    }
    meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                           MetadataPayload(kOtherProvider, "App-Provider", 10, "Tick", 4));
    writer_.Block("MetadataBlock", meta);
  }

  // Stacks first_id, first_id + 1, ...: IPs leaf first.
  void Stacks(uint32_t first_id, const std::vector<std::vector<uint64_t>>& stacks) {
    std::string body;
    base::ByteWriter w(&body);
    w.U32(first_id);
    w.U32(static_cast<uint32_t>(stacks.size()));
    for (const std::vector<uint64_t>& ips : stacks) {
      w.U32(static_cast<uint32_t>(ips.size() * 8));
      for (uint64_t ip : ips) w.U64(ip);
    }
    writer_.Block("StackBlock", body);
  }

  void Event(uint32_t metadata_id, uint64_t thread, uint32_t stack_id, int64_t time_ns,
             std::string payload) {
    payloads_.push_back(std::move(payload));
    nettrace::NettraceEvent e;
    e.thread_id = thread;
    e.capture_thread_id = thread;
    e.processor = 1;
    e.sequence_number = ++sequence_;
    e.stack_id = stack_id;
    e.timestamp = time_ns;
    e.payload = payloads_.back();
    pending_.push_back({e, metadata_id});
  }

  // Writes the events added since the last call as one block.
  void Flush() {
    if (pending_.empty()) return;
    std::string body = BlockHeader(true);
    nettrace::EventBlobEncoder encoder;
    encoder.StartBlock();
    for (const auto& [e, id] : pending_) encoder.Write(e, id, &body);
    writer_.Block("EventBlock", body);
    pending_.clear();
    payloads_.clear();
  }

  void SequencePoint() {
    Flush();
    std::string body;
    base::ByteWriter w(&body);
    w.I64(0);
    w.U32(0);
    writer_.Block("SPBlock", body);
  }

  std::string Finish() {
    Flush();
    writer_.End();
    return writer_.bytes();
  }

 private:
  Writer writer_;
  uint32_t sequence_ = 0;
  std::vector<std::pair<nettrace::NettraceEvent, uint32_t>> pending_;
  std::deque<std::string> payloads_;  // the events' payloads point into them
};

// JIT code whose generation changes at 50 ms: what a method recompiled
// (tiered up) at the same address looks like to the replay. Remembers the
// questions.
class TieredJitHistory : public symbolize::JitCodeHistory {
 public:
  void OnMmap(const recording::Mmap&) override {}
  uint32_t Generation(uint32_t pid, uint64_t address, uint64_t time_ns) override {
    asked.emplace_back(pid, address, time_ns);
    return time_ns < 50'000'000 ? 1 : 2;
  }
  std::vector<std::tuple<uint32_t, uint64_t, uint64_t>> asked;
};

class DotnetEventProfilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/profcpu-event-stacks-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_EQ(::mkdir((dir_ + "/dotnet").c_str(), 0755), 0);
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf " + dir_).c_str()), 0); }

  void Write(absl::string_view name, const std::string& bytes) {
    ASSERT_TRUE(base::WriteFile(absl::StrCat(dir_, "/dotnet/", name), bytes).ok());
  }

  DotnetEventProfiles Read(symbolize::JitCodeHistory* jit = nullptr) {
    return ReadDotnetEventStacks(
        dir_, jit, [](uint32_t pid) { return pid == 4321 ? std::string("app") : std::string(); },
        &log_);
  }

  std::string dir_;
  base::RunLog log_;
};

const DotnetEventProfile& Of(const DotnetEventProfiles& p, DotnetEventKind kind) {
  return p.profiles.at(static_cast<size_t>(kind));
}

// The sample's stack as "leaf;...;outer", each frame its type name (a type
// frame, from known_names) or its address minus one in hex.
std::string ShownFrames(const DotnetEventProfiles& all, const Profile& profile, const Sample& s) {
  std::string out;
  for (uint32_t id : profile.stack(s.stack)) {
    const Location& l = profile.location(id);
    if (!out.empty()) out += ";";
    if (l.code.kind == CodeKind::kImported) {
      const symbolize::Symbolization* name = all.known_names.Find(l.code);
      out += name == nullptr ? "?" : name->module + ":" + name->frames.at(0).function;
    } else {
      out += absl::StrCat(absl::Hex(l.code.value));
    }
  }
  return out;
}

TEST(DotnetEventKindTest, NamesFilesAndUnits) {
  EXPECT_STREQ(DotnetEventKindName(DotnetEventKind::kAlloc), "alloc");
  EXPECT_STREQ(DotnetEventKindName(DotnetEventKind::kLockWait), "lock_wait");
  EXPECT_STREQ(DotnetEventKindName(DotnetEventKind::kException), "exception");
  EXPECT_STREQ(DotnetEventStacksFile(DotnetEventKind::kAlloc), "alloc_stacks.out");
  EXPECT_STREQ(DotnetEventStacksFile(DotnetEventKind::kLockWait), "lock_wait_stacks.out");
  EXPECT_STREQ(DotnetEventStacksFile(DotnetEventKind::kException), "exception_stacks.out");
  EXPECT_STREQ(DotnetEventUnit(DotnetEventKind::kAlloc), "bytes");
  EXPECT_STREQ(DotnetEventUnit(DotnetEventKind::kLockWait), "microseconds");
  EXPECT_STREQ(DotnetEventUnit(DotnetEventKind::kException), "throws");
}

TEST_F(DotnetEventProfilesTest, NoStreamsNoProfiles) {
  DotnetEventProfiles p = Read();
  EXPECT_TRUE(p.profiles.empty());
  EXPECT_TRUE(p.requests.empty());
}

TEST_F(DotnetEventProfilesTest, AllocationsWeighBytesWithTheTypeAsLeaf) {
  StreamBuilder b;
  b.Stacks(1, {{0x1000, 0x2000, 0x3000}, {0x4000, 0x2000, 0x3000}});
  // Site 1 (stack 1) allocates three times what site 2 does.
  for (int i = 0; i < 3; ++i) {
    b.Event(kAllocTick, 77, 1, 10'000'000 + i, AllocTickPayload(100'000, "App.Big"));
  }
  b.Event(kAllocTick, 78, 2, 11'000'000, AllocTickPayload(100'000, "System.String"));
  b.Event(kAllocTick, 78, 0, 12'000'000, AllocTickPayload(100'000, "System.String"));  // no stack
  b.Event(kOtherProvider, 78, 2, 12'000'001, AllocTickPayload(5, "Not.Runtime"));
  Write("4321.nettrace", b.Finish());

  DotnetEventProfiles all = Read();
  ASSERT_EQ(all.profiles.size(), 3u);
  const DotnetEventProfile& alloc = Of(all, DotnetEventKind::kAlloc);
  EXPECT_EQ(alloc.kind, DotnetEventKind::kAlloc);
  EXPECT_EQ(alloc.events, 4u);
  EXPECT_EQ(alloc.weight, 400'000u);
  EXPECT_EQ(alloc.no_stack, 1u);
  ASSERT_EQ(alloc.profile.samples().size(), 4u);
  uint64_t big = 0;
  for (const Sample& s : alloc.profile.samples()) {
    // The file's pid (the trace header says 4242, its own namespace's).
    EXPECT_EQ(s.pid, 4321u);
    EXPECT_EQ(alloc.profile.string(s.comm), "app");
    EXPECT_EQ(alloc.profile.string(s.event), "alloc");
    EXPECT_EQ(s.period, 100'000u);
    const std::string frames = ShownFrames(all, alloc.profile, s);
    if (s.tid == 77) {
      EXPECT_EQ(frames, "[dotnet]:App.Big;fff;1fff;2fff");
      big += s.period;
    } else {
      EXPECT_EQ(s.tid, 78u);
      EXPECT_EQ(frames, "[dotnet]:System.String;3fff;1fff;2fff");
    }
  }
  EXPECT_EQ(big, 300'000u);
  // In time order.
  EXPECT_EQ(alloc.profile.samples().front().time_ns, 10'000'000u);
  EXPECT_EQ(alloc.profile.samples().back().time_ns, 11'000'000u);
  EXPECT_TRUE(Of(all, DotnetEventKind::kLockWait).profile.samples().empty());
  EXPECT_TRUE(Of(all, DotnetEventKind::kException).profile.samples().empty());
  // Four distinct frames to name, each once; the two type names named here.
  EXPECT_EQ(all.requests.size(), 4u);
  EXPECT_EQ(all.known_names.size(), 2u);
  for (const symbolize::SymbolRequest& r : all.requests) {
    EXPECT_EQ(r.location.kind, CodeKind::kProcess);
    EXPECT_EQ(r.location.space, 4321u);
  }
  // A type frame is in a space of its own, not the replay's synthetic one.
  const Location& type = alloc.profile.location(alloc.profile.stack(alloc.profile.samples()[0].stack)[0]);
  EXPECT_EQ(type.code.kind, CodeKind::kImported);
  EXPECT_NE(type.code.space, 0xFFFFFFFFu);
}

TEST_F(DotnetEventProfilesTest, JitGenerationsAreAskedAtEachEventsTime) {
  StreamBuilder b;
  b.Stacks(1, {{0x1000, 0x2000}});
  b.Event(kException, 5, 1, 10'000'000, ExceptionPayload("App.Error", "early"));
  b.Event(kException, 5, 1, 60'000'000, ExceptionPayload("App.Error", "late"));
  Write("4321.nettrace", b.Finish());

  TieredJitHistory jit;
  DotnetEventProfiles all = Read(&jit);
  const DotnetEventProfile& ex = Of(all, DotnetEventKind::kException);
  ASSERT_EQ(ex.profile.samples().size(), 2u);
  EXPECT_EQ(ex.weight, 2u);
  // The same addresses, recompiled between the throws: different locations.
  const std::vector<uint32_t>& early = ex.profile.stack(ex.profile.samples()[0].stack);
  const std::vector<uint32_t>& late = ex.profile.stack(ex.profile.samples()[1].stack);
  ASSERT_EQ(early.size(), 3u);
  ASSERT_EQ(late.size(), 3u);
  EXPECT_EQ(early[0], late[0]);  // the type frame
  for (size_t i = 1; i < 3; ++i) {
    const Location& e = ex.profile.location(early[i]);
    const Location& l = ex.profile.location(late[i]);
    EXPECT_EQ(e.code.epoch, 1u);
    EXPECT_EQ(l.code.epoch, 2u);
    EXPECT_EQ(e.code.value, l.code.value);
    EXPECT_EQ(e.address, e.code.value + 1);
    EXPECT_EQ(e.offset_adjust, 1);
    EXPECT_FALSE(e.kernel);
  }
  EXPECT_EQ(all.requests.size(), 4u);
  // Asked with the process, the looked-up byte and the event's time.
  ASSERT_EQ(jit.asked.size(), 4u);
  EXPECT_EQ(jit.asked[0], std::make_tuple(4321u, uint64_t{0xfff}, uint64_t{10'000'000}));
  EXPECT_EQ(jit.asked[3], std::make_tuple(4321u, uint64_t{0x1fff}, uint64_t{60'000'000}));
}

TEST_F(DotnetEventProfilesTest, LockWaitsPairStartAndStopPerThread) {
  StreamBuilder b;
  b.Stacks(1, {{0x1000, 0x9000}, {0x2000, 0x9000}, {0x3000, 0x9000}});
  // Thread 10 waits 1.5 ms (the Stop says), thread 11 2 ms (Start to Stop,
  // a V0 Stop), interleaved.
  b.Event(kContentionStart, 10, 1, 1'000'000, ContentionStartPayload());
  b.Event(kContentionStart, 11, 2, 2'000'000, ContentionStartPayload());
  b.Event(kContentionStopV1, 10, 3, 3'000'000, ContentionStopPayload(1'500'000));
  b.Event(kContentionStopV0, 11, 0, 4'000'000, ContentionStopPayload(-1));
  // Thread 12's Start has no stack: the Stop's is used; the Stop's NaN
  // duration is no duration.
  b.Event(kContentionStart, 12, 0, 5'000'000, ContentionStartPayload());
  b.Event(kContentionStopV1, 12, 3, 5'400'000,
          ContentionStopPayload(std::numeric_limits<double>::quiet_NaN()));
  // A Stop whose Start was before the session: counted by its duration.
  b.Event(kContentionStopV1, 13, 1, 9'000'000, ContentionStopPayload(700'000));
  // A Stop without Start or duration; a Start never stopped.
  b.Event(kContentionStopV0, 14, 1, 9'500'000, ContentionStopPayload(-1));
  b.Event(kContentionStart, 15, 1, 9'600'000, ContentionStartPayload());
  Write("4321.nettrace", b.Finish());

  DotnetEventProfiles all = Read();
  const DotnetEventProfile& lock = Of(all, DotnetEventKind::kLockWait);
  ASSERT_EQ(lock.profile.samples().size(), 4u);
  EXPECT_EQ(lock.events, 4u);
  EXPECT_EQ(lock.weight, 1500u + 2000u + 400u + 700u);
  EXPECT_EQ(lock.unpaired, 2u);
  EXPECT_EQ(lock.no_stack, 0u);
  const auto& samples = lock.profile.samples();
  // In time order of the waits' starts; no type frame.
  EXPECT_EQ(samples[0].tid, 10u);
  EXPECT_EQ(samples[0].time_ns, 1'000'000u);
  EXPECT_EQ(samples[0].period, 1500u);
  EXPECT_EQ(ShownFrames(all, lock.profile, samples[0]), "fff;8fff");  // the Start's stack
  EXPECT_EQ(samples[1].tid, 11u);
  EXPECT_EQ(samples[1].period, 2000u);
  EXPECT_EQ(ShownFrames(all, lock.profile, samples[1]), "1fff;8fff");
  EXPECT_EQ(samples[2].tid, 12u);
  EXPECT_EQ(samples[2].period, 400u);
  EXPECT_EQ(ShownFrames(all, lock.profile, samples[2]), "2fff;8fff");  // the Stop's
  EXPECT_EQ(samples[3].tid, 13u);
  EXPECT_EQ(samples[3].time_ns, 8'300'000u);
  EXPECT_EQ(samples[3].period, 700u);
  EXPECT_EQ(lock.profile.string(samples[0].event), "lock_wait");
}

TEST_F(DotnetEventProfilesTest, ExceptionsCountThrowsByTypeAndStack) {
  StreamBuilder b;
  b.Stacks(1, {{0x1000, 0x2000}, {0x5000, 0x2000}});
  b.Event(kException, 5, 1, 1'000'000, ExceptionPayload("App.NotFound", "a"));
  b.Event(kException, 5, 1, 2'000'000, ExceptionPayload("App.NotFound", "b"));
  b.Event(kException, 6, 2, 3'000'000, ExceptionPayload("System.IO.IOException", "c"));
  b.Event(kException, 6, 9, 4'000'000, ExceptionPayload("App.Unknown", "stack 9 unknown"));
  Write("4321.nettrace", b.Finish());

  DotnetEventProfiles all = Read();
  const DotnetEventProfile& ex = Of(all, DotnetEventKind::kException);
  ASSERT_EQ(ex.profile.samples().size(), 3u);
  EXPECT_EQ(ex.weight, 3u);
  EXPECT_EQ(ex.no_stack, 1u);
  EXPECT_EQ(ShownFrames(all, ex.profile, ex.profile.samples()[0]), "[dotnet]:App.NotFound;fff;1fff");
  EXPECT_EQ(ShownFrames(all, ex.profile, ex.profile.samples()[2]),
            "[dotnet]:System.IO.IOException;4fff;1fff");
  EXPECT_EQ(ex.profile.samples()[0].stack, ex.profile.samples()[1].stack);
}

TEST_F(DotnetEventProfilesTest, StackIdsStartAgainAfterASequencePoint) {
  StreamBuilder b;
  b.Stacks(1, {{0x1000}});
  b.Event(kException, 5, 1, 1'000'000, ExceptionPayload("A", ""));
  b.SequencePoint();
  b.Stacks(1, {{0x7000}});
  b.Event(kException, 5, 1, 2'000'000, ExceptionPayload("B", ""));
  Write("4321.nettrace", b.Finish());

  DotnetEventProfiles all = Read();
  const DotnetEventProfile& ex = Of(all, DotnetEventKind::kException);
  ASSERT_EQ(ex.profile.samples().size(), 2u);
  EXPECT_EQ(ShownFrames(all, ex.profile, ex.profile.samples()[0]), "[dotnet]:A;fff");
  EXPECT_EQ(ShownFrames(all, ex.profile, ex.profile.samples()[1]), "[dotnet]:B;6fff");
}

TEST_F(DotnetEventProfilesTest, EachFileIsItsProcessAndUnnamedProcessesGetTheirPid) {
  for (const char* name : {"4321.nettrace", "99.nettrace"}) {
    StreamBuilder b;
    b.Stacks(1, {{0x1000}});
    b.Event(kException, 5, 1, 1'000'000, ExceptionPayload("A", ""));
    Write(name, b.Finish());
  }
  Write("x.nettrace", "not a pid");
  DotnetEventProfiles all = Read();
  const DotnetEventProfile& ex = Of(all, DotnetEventKind::kException);
  ASSERT_EQ(ex.profile.samples().size(), 2u);
  std::vector<std::pair<uint32_t, std::string>> seen;
  for (const Sample& s : ex.profile.samples()) seen.emplace_back(s.pid, ex.profile.string(s.comm));
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::pair<uint32_t, std::string>>{{99, ":99"}, {4321, "app"}}));
  // The same address in two processes: two locations to name.
  EXPECT_EQ(all.requests.size(), 2u);
}

TEST_F(DotnetEventProfilesTest, SetSymbolsGivesEachProfileItsOwnNames) {
  StreamBuilder b;
  b.Stacks(1, {{0x1000, 0x2000}, {0x3000}});
  b.Event(kAllocTick, 5, 1, 1'000'000, AllocTickPayload(1000, "T"));
  b.Event(kException, 5, 2, 2'000'000, ExceptionPayload("E", ""));
  Write("4321.nettrace", b.Finish());
  DotnetEventProfiles all = Read();

  symbolize::SymbolTable table = all.known_names;
  for (const symbolize::SymbolRequest& r : all.requests) {
    symbolize::Symbolization s;
    s.module = "/tmp/perf-4321.map";
    s.frames.emplace_back().function = absl::StrCat("M", absl::Hex(r.location.value));
    table.Insert(r.location, s);
  }
  table.Insert({CodeKind::kNative, 3, 0x10}, {});  // a CPU frame
  all.SetSymbols(table);
  const Profile& alloc = Of(all, DotnetEventKind::kAlloc).profile;
  const Profile& ex = Of(all, DotnetEventKind::kException).profile;
  EXPECT_EQ(alloc.symbols().size(), 3u);  // T, M fff, M 1fff
  EXPECT_EQ(ex.symbols().size(), 2u);     // E, M 2fff
  const Location& leaf = alloc.location(alloc.stack(alloc.samples()[0].stack)[1]);
  ASSERT_NE(alloc.symbols().Find(leaf.code), nullptr);
  EXPECT_EQ(alloc.symbols().Find(leaf.code)->frames.at(0).function, "Mfff");
}

TEST_F(DotnetEventProfilesTest, DeepStacksKeepTheirInnermostFrames) {
  StreamBuilder b;
  std::vector<uint64_t> deep;
  for (uint64_t i = 0; i < 5000; ++i) deep.push_back(0x100000 + i * 16);
  b.Stacks(1, {deep});
  b.Event(kException, 5, 1, 1'000'000, ExceptionPayload("Deep", ""));
  Write("4321.nettrace", b.Finish());
  DotnetEventProfiles all = Read();
  const Profile& ex = Of(all, DotnetEventKind::kException).profile;
  ASSERT_EQ(ex.samples().size(), 1u);
  const std::vector<uint32_t>& stack = ex.stack(ex.samples()[0].stack);
  ASSERT_EQ(stack.size(), 1025u);
  EXPECT_EQ(ex.location(stack[1]).address, 0x100000u);
}

TEST_F(DotnetEventProfilesTest, DamagedStreamsKeepWhatCameBeforeAndNeverCrash) {
  StreamBuilder b;
  b.Stacks(1, {{0x1000}});
  b.Event(kException, 5, 1, 1'000'000, ExceptionPayload("Before", ""));
  b.Flush();
  b.Event(kException, 5, 1, 2'000'000, ExceptionPayload("After", ""));
  std::string whole = b.Finish();
  // Cut inside the last event block.
  Write("4321.nettrace", whole.substr(0, whole.size() - 12));
  Write("5.nettrace", "Nettrace garbage that is no serialization header at all");
  DotnetEventProfiles all = Read();
  const DotnetEventProfile& ex = Of(all, DotnetEventKind::kException);
  ASSERT_EQ(ex.profile.samples().size(), 1u);
  EXPECT_EQ(ShownFrames(all, ex.profile, ex.profile.samples()[0]), "[dotnet]:Before;fff");

  // Bytes flipped and prefixes all along the stream (a few hundred reads):
  // bounded, no crash.
  ASSERT_EQ(::unlink((dir_ + "/dotnet/5.nettrace").c_str()), 0);
  for (size_t i = 0; i < 2 * whole.size(); i += 5) {
    std::string bad = whole.substr(0, i / 2);
    if (i % 2 == 1) {
      bad = whole;
      bad[i / 2] = static_cast<char>(bad[i / 2] ^ 0x5a);
    }
    Write("4321.nettrace", bad);
    DotnetEventProfiles p = Read();
    ASSERT_EQ(p.profiles.size(), 3u);
    EXPECT_LE(Of(p, DotnetEventKind::kException).profile.samples().size(), 100u);
  }
}

TEST(CountDotnetEventsDroppedTest, ByKindFromTheRecording) {
  DotnetEventProfiles none;
  recording::DotnetRuntime runtime;
  runtime.events_dropped = {{"GCAllocationTick", 40, 4000, 1},
                            {"ContentionStop", 3, 30, 2},
                            {"ContentionStart", 5, 50, 2},
                            {"ExceptionThrown", 2, 20, 3},
                            {"all", 9, 90, 4}};
  CountDotnetEventsDropped({runtime}, &none);
  EXPECT_TRUE(none.profiles.empty());  // no stream read: nothing to count into

  DotnetEventProfiles p;
  for (DotnetEventKind kind :
       {DotnetEventKind::kAlloc, DotnetEventKind::kLockWait, DotnetEventKind::kException}) {
    p.profiles.emplace_back().kind = kind;
  }
  CountDotnetEventsDropped({runtime, runtime}, &p);
  EXPECT_EQ(Of(p, DotnetEventKind::kAlloc).dropped, 80u);
  EXPECT_EQ(Of(p, DotnetEventKind::kLockWait).dropped, 6u);
  EXPECT_EQ(Of(p, DotnetEventKind::kException).dropped, 4u);
}

}  // namespace
}  // namespace profcpu::fold
