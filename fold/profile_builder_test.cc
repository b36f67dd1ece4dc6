#include "fold/profile_builder.h"

#include <sys/mman.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <variant>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fold/profile_builder_parallel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recording/recording_reader.h"
#include "recording/recording_writer.h"

namespace profcpu::fold {
namespace {

using recording::Record;

absl::StatusOr<BuiltProfile> Build(const std::vector<Record>& records, const char* name,
                                    const BuildOptions& options = {}) {
  std::string path = std::string(::testing::TempDir()) + "/" + name;
  auto writer = recording::RecordingWriter::Create(path);
  EXPECT_TRUE(writer.ok());
  for (const Record& r : records) EXPECT_TRUE((*writer)->Write(r).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  auto reader = recording::RecordingReader::Open(path);
  EXPECT_TRUE(reader.ok());
  return BuildProfile(**reader, options);
}

recording::Header MakeHeader() {
  recording::Header h;
  h.event_name = "cpu-clock";
  return h;
}

recording::Mmap Map(uint32_t pid, uint64_t start, uint64_t length, uint64_t offset,
                    const char* file) {
  recording::Mmap m;
  m.pid = pid;
  m.tid = pid;
  m.start = start;
  m.length = length;
  m.file_offset = offset;
  m.inode = 7;
  m.prot = PROT_READ | PROT_EXEC;
  m.filename = file;
  return m;
}

recording::Sample SampleOf(uint32_t pid, uint32_t tid, uint64_t time,
                           std::vector<uint64_t> kernel, std::vector<uint64_t> user) {
  recording::Sample s;
  s.pid = pid;
  s.tid = tid;
  s.time_ns = time;
  s.kernel_ips = std::move(kernel);
  s.user_ips = std::move(user);
  return s;
}

TEST(ProfileBuilderTest, NormalizesAddressesAndDeduplicatesRequests) {
  recording::Comm comm;
  comm.pid = comm.tid = 10;
  comm.comm = "app";
  // The same library mapped at different addresses in two processes.
  std::vector<Record> records = {
      MakeHeader(),
      comm,
      Map(10, 0x400000, 0x1000, 0x1000, "/usr/bin/app"),
      Map(10, 0x7f0000000000, 0x10000, 0, "/usr/lib/libx.so"),
      Map(20, 0x7e0000000000, 0x10000, 0, "/usr/lib/libx.so"),
      SampleOf(10, 10, 100, {0xffffffff81000000}, {0x7f0000000100, 0x400010}),
      SampleOf(20, 20, 200, {}, {0x7e0000000100, 0x12345}),
      SampleOf(0, 0, 300, {0xffffffff81000000}, {}),
  };
  auto built = Build(records, "normalize.rec");
  ASSERT_TRUE(built.ok()) << built.status();
  const Profile& p = built->profile;
  ASSERT_EQ(p.samples().size(), 3u);
  const auto& stack = p.stack(p.samples()[0].stack);
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_EQ(p.location(stack[0]).code.kind, symbolize::CodeKind::kKernel);
  EXPECT_TRUE(p.location(stack[0]).kernel);
  // First user frame: the interrupted IP, looked up as is; file offset 0x100.
  EXPECT_EQ(p.location(stack[1]).code.kind, symbolize::CodeKind::kNative);
  EXPECT_EQ(p.location(stack[1]).code.value, 0x100u);
  EXPECT_EQ(p.location(stack[1]).offset_adjust, 0);
  // Caller: a return address, looked up one byte earlier, in the app at
  // file offset 0x1000 + 0x10 - 1.
  EXPECT_EQ(p.location(stack[2]).code.value, 0x100Fu);
  EXPECT_EQ(p.location(stack[2]).offset_adjust, 1);
  EXPECT_EQ(p.string(p.samples()[0].comm), "app");

  // libx.so offset 0x100 in pid 20 is the same location as in pid 10.
  const auto& other = p.stack(p.samples()[1].stack);
  EXPECT_EQ(p.location(other[0]).code, p.location(stack[1]).code);
  // 0x12345 is unmapped: a per-process location, named later by perf map.
  EXPECT_EQ(p.location(other[1]).code.kind, symbolize::CodeKind::kProcess);
  EXPECT_EQ(p.location(other[1]).code.space, 20u);
  EXPECT_EQ(p.string(p.samples()[1].comm), ":20");
  // The idle task, as perf names it.
  EXPECT_EQ(p.string(p.samples()[2].comm), "swapper");

  // Four distinct locations: kernel, libx+0x100, app+0x100F, pid 20's 0x12344.
  EXPECT_EQ(built->requests.size(), 4u);
  EXPECT_EQ(built->modules.size(), 2u);
  EXPECT_EQ(built->summary.samples, 3u);
  EXPECT_FALSE(built->summary.finish.has_value());
}

TEST(ProfileBuilderTest, ThreadsInheritTheirCreatorsName) {
  recording::Comm comm;
  comm.pid = comm.tid = 10;
  comm.comm = "server";
  std::vector<Record> records = {MakeHeader(), comm};
  // Enough threads to make the name table grow while names are copied.
  for (uint32_t tid = 11; tid < 2000; ++tid) {
    recording::Fork f;
    f.pid = f.ppid = 10;
    f.tid = tid;
    f.ptid = tid - 1;
    records.push_back(f);
  }
  records.push_back(SampleOf(10, 1999, 5, {}, {0x1}));
  auto built = Build(records, "threads.rec");
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(built->profile.string(built->profile.samples()[0].comm), "server");
}

TEST(ProfileBuilderTest, ExecReplacesTheAddressSpace) {
  recording::Comm exec;
  exec.pid = exec.tid = 10;
  exec.comm = "new";
  exec.exec = true;
  exec.time_ns = 50;
  std::vector<Record> records = {MakeHeader(), Map(10, 0x400000, 0x1000, 0, "/bin/old"), exec,
                                 SampleOf(10, 10, 60, {}, {0x400010})};
  auto built = Build(records, "exec.rec");
  ASSERT_TRUE(built.ok());
  const Profile& p = built->profile;
  EXPECT_EQ(p.location(p.stack(p.samples()[0].stack)[0]).code.kind,
            symbolize::CodeKind::kProcess);
  EXPECT_EQ(p.string(p.samples()[0].comm), "new");
}

TEST(ProfileBuilderTest, CountsLossesByReason) {
  std::vector<Record> records = {
      MakeHeader(),
      recording::Lost{1, 0, 5, recording::LossReason::kRingBufferFull},
      recording::Lost{2, 1, 3, recording::LossReason::kSamplesDropped},
      recording::Lost{3, 1, 1, recording::LossReason::kThrottled},
      recording::Finish{10, 0, 8, "duration"},
  };
  auto built = Build(records, "lost.rec");
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(built->summary.lost_ring_buffer, 5u);
  EXPECT_EQ(built->summary.lost_dropped, 3u);
  EXPECT_EQ(built->summary.throttle_events, 1u);
  ASSERT_TRUE(built->summary.finish.has_value());
  EXPECT_EQ(built->summary.finish->stop_reason, "duration");
}

// A JIT history where code at 0x7000 changed at time 1000.
class FakeJitHistory : public symbolize::JitCodeHistory {
 public:
  void OnMmap(const recording::Mmap& mmap) override { mmaps.push_back(mmap.filename); }
  uint32_t Generation(uint32_t pid, uint64_t address, uint64_t time_ns) override {
    asked.push_back({pid, address});
    if (address < 0x7000 || address >= 0x8000) return 0;
    return time_ns < 1000 ? 1 : 2;
  }
  std::vector<std::string> mmaps;
  std::vector<std::pair<uint32_t, uint64_t>> asked;
};

TEST(ProfileBuilderTest, JitAddressesAreTimeResolved) {
  recording::Mmap jitdump = Map(10, 0x10000, 0x1000, 0, "/tmp/jit-10.dump");
  std::vector<Record> records = {
      MakeHeader(),
      jitdump,
      Map(10, 0x400000, 0x1000, 0, "/usr/bin/app"),
      SampleOf(10, 10, 500, {}, {0x7010}),           // code A
      SampleOf(10, 10, 1500, {}, {0x7010}),          // code B at the same address
      SampleOf(10, 10, 1600, {}, {0x7010, 0x7020}),  // caller: looked up at 0x701F
      SampleOf(10, 10, 1700, {}, {0x400010}),        // native: not asked
  };
  FakeJitHistory jit;
  BuildOptions options;
  options.jit = &jit;
  auto built = Build(records, "jit.rec", options);
  ASSERT_TRUE(built.ok()) << built.status();
  const Profile& p = built->profile;
  auto leaf = [&](size_t i) { return p.location(p.stack(p.samples()[i].stack)[0]).code; };
  EXPECT_EQ(leaf(0).epoch, 1u);
  EXPECT_EQ(leaf(1).epoch, 2u);
  EXPECT_FALSE(leaf(0) == leaf(1));
  EXPECT_EQ(leaf(1), leaf(2));
  EXPECT_EQ(leaf(3).kind, symbolize::CodeKind::kNative);
  EXPECT_EQ(leaf(3).epoch, 0u);
  EXPECT_EQ(jit.mmaps, (std::vector<std::string>{"/tmp/jit-10.dump", "/usr/bin/app"}));
  EXPECT_EQ(jit.asked, (std::vector<std::pair<uint32_t, uint64_t>>{
                           {10, 0x7010}, {10, 0x7010}, {10, 0x7010}, {10, 0x701F}}));
  // One request per (address, generation).
  EXPECT_EQ(built->requests.size(), 4u);
}

// JIT code is looked up by (pid, address) whatever its mapping is called:
// .NET 7+'s W^X double mapping is a memfd the runtime unlinks (REFERENCE.md
// §2), V8's and older CoreCLR's code is anonymous. None is a module.
TEST(ProfileBuilderTest, JitMappingsAreProcessAddressesWhateverTheirName) {
  std::vector<Record> records = {
      MakeHeader(),
      Map(10, 0x7f0000000000, 0x10000, 0, "/memfd:doublemapper (deleted)"),
      Map(10, 0x7f1000000000, 0x10000, 0, "//anon"),
      SampleOf(10, 10, 5, {}, {0x7f0000000100}),
      SampleOf(10, 10, 6, {}, {0x7f1000000200}),
  };
  auto built = Build(records, "memfd.rec");
  ASSERT_TRUE(built.ok()) << built.status();
  const Profile& p = built->profile;
  ASSERT_EQ(p.samples().size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Location& location = p.location(p.stack(p.samples()[i].stack)[0]);
    EXPECT_EQ(location.code.kind, symbolize::CodeKind::kProcess) << i;
    EXPECT_EQ(location.code.space, 10u) << i;
  }
  EXPECT_EQ(p.location(p.stack(p.samples()[0].stack)[0]).code.value, 0x7f0000000100u);
  // Requests come in no particular order; each keeps its mapping's name.
  ASSERT_EQ(built->requests.size(), 2u);
  for (const auto& request : built->requests) {
    EXPECT_EQ(request.mapping_name, request.location.value == 0x7f0000000100u
                                        ? "/memfd:doublemapper (deleted)"
                                        : "//anon");
  }
  EXPECT_TRUE(built->modules.empty());
}

TEST(ProfileBuilderTest, DotNetImagesStayPerProcess) {
  std::vector<Record> records = {
      MakeHeader(),
      Map(10, 0x7f0000000000, 0x10000, 0, "/app/System.Private.CoreLib.dll"),
      SampleOf(10, 10, 5, {}, {0x7f0000000100}),
  };
  auto built = Build(records, "dll.rec");
  ASSERT_TRUE(built.ok());
  const Profile& p = built->profile;
  const Location& location = p.location(p.stack(p.samples()[0].stack)[0]);
  EXPECT_EQ(location.code.kind, symbolize::CodeKind::kProcess);
  EXPECT_EQ(location.code.value, 0x7f0000000100u);
  ASSERT_EQ(built->requests.size(), 1u);
  EXPECT_EQ(built->requests[0].mapping_name, "/app/System.Private.CoreLib.dll");
  EXPECT_TRUE(built->modules.empty());
}

// BPF records (collector/bpf/): stacks by id, off-CPU time, counted samples.
recording::StackTrace Trace(uint32_t id, bool kernel, std::vector<uint64_t> ips) {
  recording::StackTrace t;
  t.id = id;
  t.kernel = kernel;
  t.ips = std::move(ips);
  return t;
}

recording::OffCpuSample OffCpu(uint64_t end, uint64_t duration, int32_t kernel, int32_t user) {
  recording::OffCpuSample o;
  o.pid = o.tid = 10;
  o.time_ns = end;
  o.duration_ns = duration;
  o.kernel_stack = kernel;
  o.user_stack = user;
  return o;
}

TEST(ProfileBuilderTest, OffCpuSamplesWeighMicrosecondsInBlockingOrder) {
  recording::Header header = MakeHeader();
  header.mode = "offcpu";
  header.event_name = "dummy";
  std::vector<Record> records = {
      header,
      Map(10, 0x400000, 0x1000, 0, "/usr/bin/app"),
      Trace(3, true, {0xffffffff81000010, 0xffffffff81000020}),
      Trace(4, false, {0x400100, 0x400200}),
      // Known when the thread ran again: the long stay began first.
      OffCpu(5'000'000, 1'000'400, 3, 4),
      OffCpu(5'100'000, 2'000'000, 3, recording::kNoStack),
      OffCpu(5'200'000, 1000, 3, 99),  // 99: never written
  };
  auto built = Build(records, "offcpu.rec");
  ASSERT_TRUE(built.ok()) << built.status();
  const Profile& p = built->profile;
  const RecordingSummary& summary = built->summary;
  EXPECT_TRUE(summary.weighted);
  EXPECT_TRUE(summary.microseconds);
  EXPECT_EQ(summary.offcpu_samples, 3u);
  EXPECT_EQ(summary.offcpu_ns, 3'001'400u);
  EXPECT_EQ(summary.missing_stacks, 1u);
  ASSERT_EQ(p.samples().size(), 3u);
  // Sorted by when each stay began; weights are rounded microseconds.
  EXPECT_EQ(p.samples()[0].time_ns, 3'100'000u);
  EXPECT_EQ(p.samples()[0].period, 2000u);
  EXPECT_EQ(p.stack(p.samples()[0].stack).size(), 2u);  // kernel frames only
  EXPECT_EQ(p.samples()[1].time_ns, 3'999'600u);
  EXPECT_EQ(p.samples()[1].period, 1000u);
  const auto& full = p.stack(p.samples()[1].stack);
  ASSERT_EQ(full.size(), 4u);
  EXPECT_TRUE(p.location(full[0]).kernel);
  // User addresses normalize like a Sample's: file offset, callers at -1.
  EXPECT_EQ(p.location(full[2]).code.kind, symbolize::CodeKind::kNative);
  EXPECT_EQ(p.location(full[2]).code.value, 0x100u);
  EXPECT_EQ(p.location(full[3]).code.value, 0x1FFu);
  EXPECT_EQ(p.string(p.samples()[1].event), "offcpu-time");
}

TEST(ProfileBuilderTest, WallModeRootsStacksUnderOnAndOffCpu) {
  recording::Header header = MakeHeader();
  header.mode = "wall";
  recording::Sample on = SampleOf(10, 10, 100, {}, {0x400100});
  on.period = 10'101'010;  // ns of cpu-clock at 99 Hz
  recording::StackSample counted;
  counted.pid = counted.tid = 10;
  counted.time_ns = 200;
  counted.count = 3;
  counted.period = 3'000'000;
  counted.user_stack = 4;
  std::vector<Record> records = {header, Map(10, 0x400000, 0x1000, 0, "/usr/bin/app"),
                                 Trace(4, false, {0x400100}), on, counted,
                                 OffCpu(300'000, 1000, recording::kNoStack, 4)};
  auto built = Build(records, "wall.rec");
  ASSERT_TRUE(built.ok()) << built.status();
  const Profile& p = built->profile;
  ASSERT_EQ(p.samples().size(), 3u);
  EXPECT_EQ(p.samples()[0].period, 10101u);
  EXPECT_EQ(p.samples()[1].period, 3000u);  // a BPF count weighs its time
  EXPECT_EQ(p.samples()[2].period, 1u);
  std::vector<std::string> roots;
  for (const Sample& s : p.samples()) {
    const auto& stack = p.stack(s.stack);
    ASSERT_EQ(stack.size(), 2u);
    const symbolize::Symbolization* name = built->known_names.Find(p.location(stack.back()).code);
    ASSERT_NE(name, nullptr);
    roots.push_back(name->frames.at(0).function);
    EXPECT_EQ(p.string(s.event), "wall-time");
  }
  EXPECT_EQ(roots, (std::vector<std::string>{"[on-cpu]", "[on-cpu]", "[off-cpu]"}));
  // The synthetic frames need no symbolizer.
  EXPECT_EQ(built->requests.size(), 1u);
}

TEST(ProfileBuilderTest, BpfCountsWeighSamples) {
  recording::Header header = MakeHeader();
  header.backend = "bpf";
  recording::StackSample counted;
  counted.pid = counted.tid = 10;
  counted.time_ns = 1'000'000'000;
  counted.count = 250;
  counted.period = 250 * 1'001'001ull;
  counted.user_stack = 4;
  auto built = Build({header, Trace(4, false, {0x1234}), counted}, "counted.rec");
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_TRUE(built->summary.weighted);
  EXPECT_FALSE(built->summary.microseconds);
  EXPECT_EQ(built->summary.samples, 250u);
  ASSERT_EQ(built->profile.samples().size(), 1u);
  EXPECT_EQ(built->profile.samples()[0].period, 250u);
}

TEST(ProfileBuilderTest, NewerFormatIsRefused) {
  recording::Header header = MakeHeader();
  header.format_version = recording::kFormatVersion + 1;
  auto built = Build({header}, "newer.rec");
  EXPECT_EQ(built.status().code(), absl::StatusCode::kUnimplemented);
}

// -callgraph dwarf samples: the unwinder gives the user chain; without one,
// only the IP (from the registers) remains and the stack counts as cut.
class FixedUnwinder : public symbolize::UserStackUnwinder {
 public:
  symbolize::UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                                 const symbolize::AddressSpaceTracker& spaces) override {
    masks.push_back(regs_mask);
    EXPECT_TRUE(spaces.FindMapping(sample.pid, 0x400010).has_value());
    return {{0x400010, 0x400020}, sample.time_ns == 20};
  }
  std::vector<uint64_t> masks;
};

TEST(ProfileBuilderTest, DwarfSamplesAreUnwoundThroughTheInterface) {
  recording::Header header = MakeHeader();
  header.callgraph = "dwarf";
  header.user_regs_mask = 0xff01ff;
  auto dwarf_sample = [](uint64_t time) {
    recording::Sample s = SampleOf(10, 10, time, {0xffffffff81000000}, {});
    s.user_regs_abi = 2;
    s.user_regs.assign(17, 0);
    s.user_regs[8] = 0x400010;  // the IP's slot for this mask
    return s;
  };
  std::vector<Record> records = {header, Map(10, 0x400000, 0x1000, 0, "/usr/bin/app"),
                                 dwarf_sample(10), dwarf_sample(20),
                                 SampleOf(10, 10, 30, {}, {0x400010})};
  FixedUnwinder unwinder;
  BuildOptions options;
  options.unwinder = &unwinder;
  auto built = Build(records, "dwarf.rec", options);
  ASSERT_TRUE(built.ok()) << built.status();
  const Profile& p = built->profile;
  ASSERT_EQ(p.samples().size(), 3u);
  EXPECT_EQ(p.stack(p.samples()[0].stack).size(), 3u);  // kernel + two unwound
  EXPECT_EQ(unwinder.masks, (std::vector<uint64_t>{0xff01ff, 0xff01ff}));
  EXPECT_EQ(built->summary.dwarf_stacks, 2u);
  EXPECT_EQ(built->summary.dwarf_truncated, 1u);
  EXPECT_EQ(built->summary.depth_limit_stacks, 0u);  // an unwind that stopped is no depth limit

  auto bare = Build(records, "dwarf-bare.rec");
  ASSERT_TRUE(bare.ok());
  const Profile& q = bare->profile;
  EXPECT_EQ(q.stack(q.samples()[0].stack).size(), 2u);  // kernel + the IP
  EXPECT_EQ(q.location(q.stack(q.samples()[0].stack)[1]).address, 0x400010u);
  EXPECT_EQ(bare->summary.dwarf_not_unwound, 2u);
}

// .NET on-stack replacement: Main -> Work, Work entered through OSR, whose
// frame record names Work's own Tier0 code instead of Main
// (symbolize/dotnet_osr_repair.h). The layout of symbolize's test sample.
constexpr uint64_t kOsrJit = 0x7f0000001000;           // //anon, JIT code
constexpr uint64_t kOsrMainTier0 = 0x7f0000001b10;     // Main[QuickJitted], after its call
constexpr uint64_t kOsrWorkTier0 = 0x7f0000002a70;     // Work[QuickJitted], after the patchpoint call
constexpr uint64_t kOsrWork = 0x7f0000002b27;          // Work[OptimizedTier1OSR]
constexpr uint64_t kOsrCoreclr = 0x7f00100003cc;       // libcoreclr.so
constexpr uint64_t kOsrSp = 0x7ffc00001000;
constexpr uint64_t kOsrFp = kOsrSp + 32;

class FakeOsrJit : public symbolize::JitCodeHistory {
 public:
  void OnMmap(const recording::Mmap&) override {}
  uint32_t Generation(uint32_t, uint64_t address, uint64_t) override {
    return address >= kOsrJit && address < kOsrJit + 0x2000 ? 1 : 0;
  }
  bool NamesAnyCode(uint32_t pid, absl::string_view part) override {
    EXPECT_EQ(part, "[OptimizedTier1OSR]");
    return pid == 10;
  }
  std::string CodeName(uint32_t pid, uint64_t address, uint32_t generation) override {
    named.push_back({pid, address});
    EXPECT_EQ(generation, 1u);
    if (address >= 0x7f0000002ae0 && address < 0x7f0000002b89) return "App::Work()[OptimizedTier1OSR]";
    return "App::Other()[QuickJitted]";
  }
  std::vector<std::pair<uint32_t, uint64_t>> named;
};

// A sample in Work's OSR loop with registers {bp, sp, ip} and a stack copy
// holding the OSR record, the Tier0 record 112 bytes above it, Main's record.
recording::Sample OsrSample(uint32_t pid, uint64_t time) {
  recording::Sample s = SampleOf(pid, pid, time, {}, {kOsrWork, kOsrWorkTier0, kOsrCoreclr});
  s.user_regs_abi = 2;
  s.user_regs = {kOsrFp, kOsrSp, kOsrWork};
  std::vector<uint64_t> words(512 / 8, 0);
  auto set = [&](uint64_t address, uint64_t value) { words[(address - kOsrSp) / 8] = value; };
  const uint64_t main_fp = kOsrSp + 0xf0;
  set(kOsrFp, main_fp);
  set(kOsrFp + 8, kOsrWorkTier0);
  set(kOsrFp + 112, main_fp);
  set(kOsrFp + 120, kOsrMainTier0);
  set(main_fp, kOsrSp + 0x400);  // above the copy: the walk ends there
  set(main_fp + 8, kOsrCoreclr);
  s.user_stack.assign(reinterpret_cast<const char*>(words.data()), words.size() * 8);
  return s;
}

TEST(ProfileBuilderTest, DotnetOsrFramesGetTheirCallerBackFromTheStackCopy) {
  recording::Header header = MakeHeader();
  header.callgraph = "fp+cfi";
  header.user_regs_mask = 0x1c0;
  std::vector<Record> records = {header};
  for (uint32_t pid : {10u, 20u}) {
    records.push_back(Map(pid, kOsrJit, 0x2000, 0, "//anon"));
    records.push_back(Map(pid, 0x7f0010000000, 0x100000, 0, "/usr/lib/libcoreclr.so"));
  }
  records.push_back(OsrSample(10, 100));
  records.push_back(OsrSample(10, 200));
  records.push_back(OsrSample(20, 300));  // its files name no OSR code: left alone
  // An off-CPU stay with the same stack copy (BPF): repaired alike.
  recording::StackTrace trace;
  trace.id = 5;
  trace.ips = OsrSample(10, 0).user_ips;
  records.push_back(trace);
  recording::OffCpuSample stay;
  stay.time_ns = 900;
  stay.duration_ns = 500;
  stay.pid = stay.tid = 10;
  stay.user_stack = 5;
  stay.user_regs_abi = 2;
  stay.user_regs = OsrSample(10, 0).user_regs;
  stay.user_stack_copy = OsrSample(10, 0).user_stack;
  records.push_back(stay);
  FakeOsrJit jit;
  auto built = Build(records, "osr.rec", {.jit = &jit});
  ASSERT_TRUE(built.ok()) << built.status();
  const Profile& p = built->profile;
  auto user_addresses = [&](size_t i) {
    std::vector<uint64_t> out;
    for (uint32_t id : p.stack(p.samples()[i].stack)) out.push_back(p.location(id).address);
    return out;
  };
  const std::vector<uint64_t> repaired = {kOsrWork, kOsrMainTier0, kOsrCoreclr};
  EXPECT_EQ(user_addresses(0), repaired);
  EXPECT_EQ(user_addresses(1), repaired);
  EXPECT_EQ(user_addresses(2), (std::vector<uint64_t>{kOsrWork, kOsrWorkTier0, kOsrCoreclr}));
  EXPECT_EQ(user_addresses(3), repaired);
  const DotnetOsrCounts& osr = built->summary.dotnet_osr;
  ASSERT_EQ(osr.by_pid.size(), 1u);
  EXPECT_EQ(osr.by_pid.at(10).samples_in_osr, 3u);
  EXPECT_EQ(osr.by_pid.at(10).unrepaired(), 0u);
  EXPECT_EQ(osr.max_copy_bytes_used, 160u);
  // Each chain the OSR repair changed counts as repaired, though it put a
  // frame in another's place rather than adding one; pid 20's was not.
  EXPECT_EQ(built->summary.stacks_repaired, 3u);
  // Named once per location (the leaf, the Tier0 word looked up inside its
  // call, the caller put back), never for pid 20 nor native code.
  EXPECT_EQ(jit.named, (std::vector<std::pair<uint32_t, uint64_t>>{
                           {10, kOsrWork}, {10, kOsrWorkTier0 - 1}, {10, kOsrMainTier0 - 1}}));

  // Plain frame pointers: nothing to repair from, the hole is counted.
  header.callgraph = "fp";
  header.user_regs_mask = 0;
  records[0] = header;
  for (Record& r : records) {
    if (auto* s = std::get_if<recording::Sample>(&r)) {
      s->user_regs_abi = 0;
      s->user_regs.clear();
      s->user_stack.clear();
    }
  }
  auto plain = Build(records, "osr-fp.rec", {.jit = &jit});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->summary.dotnet_osr.by_pid.at(10).samples_in_osr, 2u);
  EXPECT_EQ(plain->summary.dotnet_osr.by_pid.at(10).unrepaired(), 2u);
  EXPECT_EQ(plain->summary.stacks_repaired, 0u);
  EXPECT_NE(symbolize::OsrWarning(10, plain->summary.dotnet_osr.by_pid.at(10), false), "");
}

TEST(ProfileBuilderTest, RecordingWithoutHeaderIsRejected) {
  auto built = Build({SampleOf(1, 1, 1, {}, {1})}, "noheader.rec");
  EXPECT_EQ(built.status().code(), absl::StatusCode::kDataLoss);
}


// --- the parallel replay (profile_builder_parallel.h) ----------------------

// Every part of two replays that an output could show, compared.
void ExpectSameReplay(const BuiltProfile& a, const BuiltProfile& b) {
  const Profile& p = a.profile;
  const Profile& q = b.profile;
  ASSERT_EQ(p.samples().size(), q.samples().size());
  for (size_t i = 0; i < p.samples().size(); ++i) {
    const Sample& s = p.samples()[i];
    const Sample& t = q.samples()[i];
    EXPECT_EQ(std::tie(s.time_ns, s.pid, s.tid, s.cpu, s.period, s.comm, s.event, s.stack),
              std::tie(t.time_ns, t.pid, t.tid, t.cpu, t.period, t.comm, t.event, t.stack))
        << "sample " << i;
  }
  ASSERT_EQ(p.stack_count(), q.stack_count());
  for (uint32_t i = 0; i < p.stack_count(); ++i) EXPECT_EQ(p.stack(i), q.stack(i)) << "stack " << i;
  ASSERT_EQ(p.location_count(), q.location_count());
  for (uint32_t i = 0; i < p.location_count(); ++i) {
    const Location& l = p.location(i);
    const Location& m = q.location(i);
    EXPECT_TRUE(l.code == m.code) << "location " << i;
    EXPECT_EQ(std::tie(l.address, l.offset_adjust, l.kernel, l.mapping_start, l.mapping_end),
              std::tie(m.address, m.offset_adjust, m.kernel, m.mapping_start, m.mapping_end))
        << "location " << i;
  }
  for (const Sample& s : p.samples()) {
    EXPECT_EQ(p.string(s.comm), q.string(s.comm));
    EXPECT_EQ(p.string(s.event), q.string(s.event));
  }
  auto sorted = [](std::vector<symbolize::SymbolRequest> r) {
    std::sort(r.begin(), r.end(), [](const auto& x, const auto& y) { return x.location < y.location; });
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& x : r) {
      out.push_back({absl::StrCat(static_cast<int>(x.location.kind), ":", x.location.space, ":",
                                  x.location.value, ":", x.location.epoch),
                     x.mapping_name});
    }
    return out;
  };
  EXPECT_EQ(sorted(a.requests), sorted(b.requests));
  ASSERT_EQ(a.modules.size(), b.modules.size());
  for (size_t i = 0; i < a.modules.size(); ++i) EXPECT_EQ(a.modules[i].path, b.modules[i].path);
  const RecordingSummary& x = a.summary;
  const RecordingSummary& y = b.summary;
  EXPECT_EQ(std::tie(x.samples, x.first_sample_ns, x.last_sample_ns, x.depth_limit_stacks,
                     x.lost_ring_buffer, x.dwarf_stacks, x.missing_stacks),
            std::tie(y.samples, y.first_sample_ns, y.last_sample_ns, y.depth_limit_stacks,
                     y.lost_ring_buffer, y.dwarf_stacks, y.missing_stacks));
  EXPECT_EQ(x.processes.size(), y.processes.size());
  EXPECT_EQ(x.finish.has_value(), y.finish.has_value());
}

// Three processes that map, fork, exec and rename threads between their
// samples, so every slice starts from different mappings and names.
std::vector<Record> BusyRecording() {
  std::vector<Record> records = {MakeHeader()};
  uint64_t t = 10;
  for (uint32_t pid : {10u, 20u, 30u}) {
    recording::Comm comm;
    comm.pid = comm.tid = pid;
    comm.comm = absl::StrCat("proc", pid);
    comm.time_ns = t++;
    records.push_back(comm);
    records.push_back(Map(pid, 0x400000, 0x10000, 0, "/usr/bin/app"));
  }
  for (int round = 0; round < 40; ++round) {
    if (round % 7 == 3) {
      // A library mapped mid-run (a new module), at a per-round address.
      records.push_back(Map(10 + 10 * (round % 3), 0x7f0000000000 + round * 0x100000, 0x10000,
                            0x1000 * round, absl::StrCat("/usr/lib/lib", round, ".so").c_str()));
    }
    if (round == 11) {
      recording::Fork fork;
      fork.pid = fork.tid = 40;
      fork.ppid = fork.ptid = 20;
      fork.time_ns = t++;
      records.push_back(fork);
    }
    if (round == 23) {
      recording::Comm exec;  // 20 execs: a new address space, a new name
      exec.pid = exec.tid = 20;
      exec.comm = "exec20";
      exec.exec = true;
      exec.time_ns = t++;
      records.push_back(exec);
      records.push_back(Map(20, 0x500000, 0x10000, 0, "/usr/bin/other"));
    }
    for (uint32_t pid : {10u, 20u, 30u, 40u}) {
      const uint64_t lib = 0x7f0000000000 + (round / 7 * 7 + 3) * 0x100000;
      records.push_back(SampleOf(pid, pid + round % 2, t++, {0xffffffff81000000 + round % 5},
                                 {0x400010u + 16u * (round % 9), lib + 0x20, 0x500030,
                                  0x400100u + round % 4, 0x123456}));
    }
  }
  recording::Lost lost;
  lost.count = 3;
  lost.reason = recording::LossReason::kRingBufferFull;
  records.push_back(lost);
  recording::Finish finish;
  finish.end_time_ns = t;
  records.push_back(finish);
  return records;
}

TEST(ProfileBuilderParallelTest, SlicesGiveTheOneThreadProfileIdForId) {
  const std::vector<Record> records = BusyRecording();
  auto one = Build(records, "parallel-one.rec");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_FALSE(one->parallel.has_value());
  for (size_t slice : {1, 3, 7, 64, 100000}) {
    BuildOptions options;
    options.threads = 3;
    options.slice_samples = slice;
    auto split = Build(records, "parallel-split.rec", options);
    ASSERT_TRUE(split.ok()) << split.status();
    ASSERT_TRUE(split->parallel.has_value());
    // The records after the last sample (Lost, Finish) make a slice too.
    EXPECT_EQ(split->parallel->tasks, static_cast<int>(160 / slice + 1));
    EXPECT_EQ(split->parallel->threads, 3);
    EXPECT_GE(split->parallel->serial, 0);
    EXPECT_LE(split->parallel->longest_task, split->parallel->task_cpu);
    SCOPED_TRACE(absl::StrCat("slices of ", slice, " samples"));
    ExpectSameReplay(*one, *split);
  }
}

// The JIT history's answers change once it hears of a jitdump: samples
// before the jitdump's Mmap (in other slices, on other threads) still get the
// answers from before.
class JitdumpAwareHistory : public symbolize::JitCodeHistory {
 public:
  void OnMmap(const recording::Mmap& mmap) override {
    if (absl::StrContains(mmap.filename, "jit-")) knows_jitdump = true;
  }
  uint32_t Generation(uint32_t, uint64_t address, uint64_t time_ns) override {
    if (!knows_jitdump) return 0;
    return address >= 0x7000 && address < 0x8000 ? 1 + static_cast<uint32_t>(time_ns / 100) : 0;
  }
  bool knows_jitdump = false;
};

TEST(ProfileBuilderParallelTest, JitAnswersAreTheOneThreadOnes) {
  std::vector<Record> records = {MakeHeader(), Map(10, 0x400000, 0x1000, 0, "/usr/bin/app")};
  for (uint64_t t = 0; t < 1000; t += 10) {
    if (t == 500) records.push_back(Map(10, 0x10000, 0x1000, 0, "/tmp/jit-10.dump"));
    records.push_back(SampleOf(10, 10, t, {}, {0x7000 + t, 0x7010, 0x400010}));
  }
  JitdumpAwareHistory serial_jit;
  BuildOptions serial;
  serial.jit = &serial_jit;
  auto one = Build(records, "jit-one.rec", serial);
  ASSERT_TRUE(one.ok()) << one.status();
  JitdumpAwareHistory parallel_jit;
  BuildOptions parallel = serial;
  parallel.jit = &parallel_jit;
  parallel.threads = 4;
  parallel.slice_samples = 8;
  auto split = Build(records, "jit-split.rec", parallel);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_TRUE(split->parallel.has_value());
  ExpectSameReplay(*one, *split);
  // Both kinds of answer made it into the profile.
  const Profile& p = split->profile;
  EXPECT_EQ(p.location(p.stack(p.samples().front().stack)[0]).code.epoch, 0u);
  EXPECT_GT(p.location(p.stack(p.samples().back().stack)[0]).code.epoch, 0u);
}

// An unwinder whose answers depend on the order it is asked in (as a real
// one's per-process sessions, or a saved file's entries, do) and on the
// mappings it is shown.
class OrderedUnwinder : public symbolize::UserStackUnwinder {
 public:
  symbolize::UnwoundStack Unwind(const recording::Sample& sample, uint64_t,
                                 const symbolize::AddressSpaceTracker& spaces) override {
    asked.push_back({sample.time_ns, sample.tid});
    const uint64_t n = asked.size();
    const bool mapped = spaces.FindMapping(sample.pid, 0x500030).has_value();
    return {{0x400010 + 16 * (n % 5), mapped ? 0x500030u : 0x400100u, 0x400200 + n % 3}, n % 3 == 0};
  }
  symbolize::UnwoundStack RepairLeaf(const symbolize::UserStackCopy& copy,
                                     const std::vector<uint64_t>& chain,
                                     const symbolize::AddressSpaceTracker&) override {
    asked.push_back({copy.time_ns, copy.tid});
    const uint64_t n = asked.size();
    if (n % 2 == 0) return {chain, false};
    std::vector<uint64_t> ips = chain;
    ips.insert(ips.begin() + 1, 0x400300 + n % 7);
    return {ips, false};
  }
  std::vector<std::pair<uint64_t, uint32_t>> asked;  // (time, tid) of each call
};

// BusyRecording's samples with stack copies: -callgraph fp+cfi or dwarf.
std::vector<Record> WithStackCopies(const std::string& callgraph) {
  std::vector<Record> records = BusyRecording();
  for (Record& record : records) {
    if (auto* header = std::get_if<recording::Header>(&record)) {
      header->callgraph = callgraph;
      header->user_regs_mask = 0xff01ff;
    }
    auto* sample = std::get_if<recording::Sample>(&record);
    // Every fifth a kernel thread's (no registers): never asked about.
    if (sample == nullptr || sample->time_ns % 5 == 0) continue;
    sample->user_regs_abi = 2;
    sample->user_regs.assign(17, 0);
    sample->user_regs[8] = sample->user_ips.front();
    sample->user_stack.assign(64, '\x01');
    if (callgraph == "dwarf") sample->user_ips.clear();
  }
  return records;
}

TEST(ProfileBuilderParallelTest, StackCopiesSplitWithTheOneThreadUnwinds) {
  for (const std::string callgraph : {"fp+cfi", "dwarf"}) {
    SCOPED_TRACE(callgraph);
    const std::vector<Record> records = WithStackCopies(callgraph);
    OrderedUnwinder serial_unwinder;
    BuildOptions serial;
    serial.unwinder = &serial_unwinder;
    auto one = Build(records, "copies-one.rec", serial);
    ASSERT_TRUE(one.ok()) << one.status();
    for (size_t slice : {1, 7, 64}) {
      SCOPED_TRACE(absl::StrCat("slices of ", slice, " samples"));
      OrderedUnwinder parallel_unwinder;
      BuildOptions parallel = serial;
      parallel.unwinder = &parallel_unwinder;
      parallel.threads = 4;
      parallel.slice_samples = slice;
      auto split = Build(records, "copies-split.rec", parallel);
      ASSERT_TRUE(split.ok()) << split.status();
      ASSERT_TRUE(split->parallel.has_value()) << split->one_thread_reason;
      // Asked about the same samples, in the same order.
      EXPECT_EQ(parallel_unwinder.asked, serial_unwinder.asked);
      ExpectSameReplay(*one, *split);
      const RecordingSummary& x = one->summary;
      const RecordingSummary& y = split->summary;
      EXPECT_EQ(std::tie(x.dwarf_truncated, x.dwarf_not_unwound, x.leaf_repair_stacks,
                         x.leaf_repaired, x.leaf_frames_added, x.stacks_repaired),
                std::tie(y.dwarf_truncated, y.dwarf_not_unwound, y.leaf_repair_stacks,
                         y.leaf_repaired, y.leaf_frames_added, y.stacks_repaired));
    }
    // The unwinder's answers made it into the stacks (a check that can fail).
    if (callgraph == "dwarf") {
      EXPECT_GT(one->summary.dwarf_stacks, 100u);
      EXPECT_GT(one->summary.dwarf_truncated, 0u);
    } else {
      EXPECT_GT(one->summary.leaf_repaired, 50u);
    }
  }
}

// An unwinder over files (as symbolize's DwarfUnwinder): each worker thread
// gets one of its own, whose answers come back to the run's in recording
// order (to be saved).
class FileUnwinder : public symbolize::UserStackUnwinder {
 public:
  symbolize::UnwoundStack Unwind(const recording::Sample& sample, uint64_t,
                                 const symbolize::AddressSpaceTracker& spaces) override {
    ++asked;
    const bool mapped = spaces.FindMapping(sample.pid, 0x500030).has_value();
    return {{0x400010 + 16 * (sample.time_ns % 5), mapped ? 0x500030u : 0x400100u}, sample.time_ns % 3 == 0};
  }
  symbolize::UnwoundStack RepairLeaf(const symbolize::UserStackCopy& copy,
                                     const std::vector<uint64_t>& chain,
                                     const symbolize::AddressSpaceTracker&) override {
    ++asked;
    if (copy.time_ns % 2 == 0) return {chain, false};
    std::vector<uint64_t> ips = chain;
    ips.insert(ips.begin() + 1, 0x400300 + copy.time_ns % 7);
    return {ips, false};
  }
  std::unique_ptr<symbolize::UserStackUnwinder> NewWorker(size_t workers) override {
    EXPECT_EQ(workers, 4u);
    return std::make_unique<FileUnwinder>();
  }
  void TookUnwind(uint64_t time_ns, uint32_t tid, const symbolize::UnwoundStack& answer) override {
    took.push_back({time_ns, tid, answer.ips});
  }
  void TookRepair(uint64_t time_ns, uint32_t tid, const std::vector<uint64_t>&,
                  const symbolize::UnwoundStack& answer) override {
    took.push_back({time_ns, tid, answer.ips});
  }
  void AddWorker(UserStackUnwinder& worker) override {
    asked += static_cast<FileUnwinder&>(worker).asked;
    ++workers_added;
  }
  size_t asked = 0;
  int workers_added = 0;
  std::vector<std::tuple<uint64_t, uint32_t, std::vector<uint64_t>>> took;
};

// Records what the one-thread replay asked, in order.
class SavingFileUnwinder : public FileUnwinder {
 public:
  symbolize::UnwoundStack Unwind(const recording::Sample& sample, uint64_t mask,
                                 const symbolize::AddressSpaceTracker& spaces) override {
    symbolize::UnwoundStack answer = FileUnwinder::Unwind(sample, mask, spaces);
    took.push_back({sample.time_ns, sample.tid, answer.ips});
    return answer;
  }
  symbolize::UnwoundStack RepairLeaf(const symbolize::UserStackCopy& copy,
                                     const std::vector<uint64_t>& chain,
                                     const symbolize::AddressSpaceTracker& spaces) override {
    symbolize::UnwoundStack answer = FileUnwinder::RepairLeaf(copy, chain, spaces);
    took.push_back({copy.time_ns, copy.tid, answer.ips});
    return answer;
  }
};

TEST(ProfileBuilderParallelTest, WorkersUnwindWithUnwindersOfTheirOwn) {
  for (const std::string callgraph : {"fp+cfi", "dwarf"}) {
    SCOPED_TRACE(callgraph);
    const std::vector<Record> records = WithStackCopies(callgraph);
    SavingFileUnwinder serial_unwinder;
    BuildOptions serial;
    serial.unwinder = &serial_unwinder;
    auto one = Build(records, "workers-one.rec", serial);
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_GT(serial_unwinder.took.size(), 100u);
    for (size_t slice : {1, 7, 64}) {
      SCOPED_TRACE(absl::StrCat("slices of ", slice, " samples"));
      FileUnwinder run_unwinder;
      BuildOptions parallel = serial;
      parallel.unwinder = &run_unwinder;
      parallel.threads = 4;
      parallel.slice_samples = slice;
      auto split = Build(records, "workers-split.rec", parallel);
      ASSERT_TRUE(split.ok()) << split.status();
      ASSERT_TRUE(split->parallel.has_value()) << split->one_thread_reason;
      EXPECT_EQ(run_unwinder.workers_added, 4);
      // The workers asked; the run's unwinder got every answer, in order.
      EXPECT_EQ(run_unwinder.asked, serial_unwinder.took.size());
      EXPECT_EQ(run_unwinder.took, serial_unwinder.took);
      ExpectSameReplay(*one, *split);
      EXPECT_EQ(std::tie(one->summary.dwarf_truncated, one->summary.leaf_repaired,
                         one->summary.leaf_frames_added),
                std::tie(split->summary.dwarf_truncated, split->summary.leaf_repaired,
                         split->summary.leaf_frames_added));
    }
  }
}

TEST(ProfileBuilderParallelTest, BpfReplaysOnOneThread) {
  recording::Header dwarf = MakeHeader();
  dwarf.callgraph = "dwarf";
  recording::Header fpcfi = MakeHeader();
  fpcfi.callgraph = "fp+cfi";
  recording::Header bpf = MakeHeader();
  bpf.backend = "bpf";
  EXPECT_EQ(WhyReplayOnOneThread(dwarf), "");
  EXPECT_EQ(WhyReplayOnOneThread(fpcfi), "");
  EXPECT_NE(WhyReplayOnOneThread(bpf), "");
  BuildOptions options;
  options.threads = 4;
  auto built = Build({bpf, SampleOf(10, 10, 5, {}, {0x400010})}, "bpf-one.rec", options);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_FALSE(built->parallel.has_value());
  EXPECT_THAT(built->one_thread_reason, ::testing::HasSubstr("BPF"));
}

TEST(ProfileBuilderParallelTest, ErrorsAreTheOneThreadOnes) {
  recording::Header newer = MakeHeader();
  newer.format_version = recording::kFormatVersion + 1;
  BuildOptions options;
  options.threads = 4;
  options.slice_samples = 1;
  auto built = Build({MakeHeader(), SampleOf(10, 10, 5, {}, {1}), SampleOf(10, 10, 6, {}, {2}),
                      newer, SampleOf(10, 10, 7, {}, {3})},
                     "newer-split.rec", options);
  EXPECT_EQ(built.status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace profcpu::fold
