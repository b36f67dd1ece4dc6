#include "render/pprof_writer.h"

#include <zlib.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/profile.pb.h"  // generated from render/proto/profile.proto

namespace profcpu::render {
namespace {

namespace pb = ::perftools::profiles;

// A profile with a native frame in a library mapped by two processes at
// different addresses, an inlined frame with a source line, a kernel frame and
// an unnamed JIT address.
struct TestProfile {
  fold::Profile profile;
  std::vector<symbolize::Module> modules;
};

TestProfile Make() {
  TestProfile t;
  symbolize::Module lib;
  lib.path = "/usr/lib/libwork.so";
  lib.build_id = std::string("\xab\xcd\x01\x02", 4);
  t.modules.push_back(lib);
  t.profile.SetModules(t.modules);

  // User addresses lie in a mapping of their process: 64 KiB from the
  // address's 64 KiB boundary, as the replay would have recorded it.
  auto location = [&](symbolize::CodeKind kind, uint32_t space, uint64_t value,
                      uint64_t address, bool kernel) {
    fold::Location l;
    l.code = {kind, space, value};
    l.address = address;
    l.kernel = kernel;
    if (!kernel) {
      l.mapping_start = address & ~uint64_t{0xffff};
      l.mapping_end = l.mapping_start + 0x10000;
    }
    return t.profile.InternLocation(l);
  };
  // libwork.so's offset 0x1234 in pid 10 (loaded at 0x7f0000000000) and in
  // pid 20 (at 0x7e0000000000).
  const uint32_t work10 = location(symbolize::CodeKind::kNative, 0, 0x1234, 0x7f0000001234, false);
  const uint32_t work20 = location(symbolize::CodeKind::kNative, 0, 0x1234, 0x7e0000001234, false);
  const uint32_t kernel = location(symbolize::CodeKind::kKernel, 0, 0xffffffff81000010,
                                   0xffffffff81000010, true);
  const uint32_t jit = location(symbolize::CodeKind::kProcess, 10, 0x40001000, 0x40001000, false);

  symbolize::Symbolization work;
  work.module = lib.path;
  work.frames.push_back({"inner_helper", 4, true, "/src/work.cc", 42});
  work.frames.push_back({"do_work", 0x34, false, "/src/work.cc", 10});
  t.profile.mutable_symbols().Insert({symbolize::CodeKind::kNative, 0, 0x1234}, work);
  symbolize::Symbolization syscall;
  syscall.module = "[kernel.kallsyms]";
  syscall.frames.push_back({"do_syscall_64", 0x10, false, "", 0});
  t.profile.mutable_symbols().Insert({symbolize::CodeKind::kKernel, 0, 0xffffffff81000010}, syscall);
  symbolize::Symbolization unknown;
  unknown.module = "/tmp/perf-10.map";
  t.profile.mutable_symbols().Insert({symbolize::CodeKind::kProcess, 10, 0x40001000}, unknown);

  auto sample = [&](uint32_t pid, std::vector<uint32_t> stack, uint64_t period) {
    fold::Sample s;
    s.pid = s.tid = pid;
    s.comm = t.profile.InternString(pid == 10 ? "app" : "other");
    s.event = t.profile.InternString("cpu-clock");
    s.period = period;
    s.stack = t.profile.InternStack(stack);
    t.profile.AddSample(s);
  };
  sample(10, {kernel, work10}, 1000);
  sample(10, {kernel, work10}, 1000);  // aggregated with the first
  sample(10, {jit, work10}, 500);
  sample(20, {work20}, 2000);
  return t;
}

const std::string& Str(const pb::Profile& p, int64_t index) { return p.string_table(index); }

TEST(PprofWriterTest, WritesMappingsBuildIdsFunctionsAndSamples) {
  TestProfile t = Make();
  PprofOptions options;
  options.sample_rate = 1000;
  options.start_unix_ns = 1700000000000000000;
  options.duration_ns = 3000000000;
  options.comments = {"profcpu test"};
  absl::StatusOr<std::string> bytes = SerializePprof(t.profile, options);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(*bytes));

  ASSERT_EQ(p.string_table(0), "");
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(Str(p, p.sample_type(0).type()), "samples");
  EXPECT_EQ(Str(p, p.sample_type(1).type()), "cpu");
  EXPECT_EQ(Str(p, p.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(p.period(), 1000000);  // 1000 Hz
  EXPECT_EQ(p.time_nanos(), 1700000000000000000);
  EXPECT_EQ(p.duration_nanos(), 3000000000);
  ASSERT_EQ(p.comment_size(), 1);
  EXPECT_EQ(Str(p, p.comment(0)), "profcpu test");

  // One mapping per load of the library, each recovering the file offset.
  int library_mappings = 0;
  for (const pb::Mapping& m : p.mapping()) {
    if (Str(p, m.filename()) != "/usr/lib/libwork.so") continue;
    ++library_mappings;
    EXPECT_EQ(Str(p, m.build_id()), "abcd0102");
    // Every address in it maps back to its offset in the file.
    for (const pb::Location& l : p.location()) {
      if (l.mapping_id() != m.id()) continue;
      EXPECT_EQ(l.address() - m.memory_start() + m.file_offset(), 0x1234u);
    }
    EXPECT_TRUE(m.has_functions());
    EXPECT_TRUE(m.has_inline_frames());
    EXPECT_TRUE(m.has_line_numbers());
  }
  EXPECT_EQ(library_mappings, 2);
  // The main binary first: the outermost frame of the first sample.
  EXPECT_EQ(Str(p, p.mapping(0).filename()), "/usr/lib/libwork.so");

  // Inlined frames innermost first, with their lines.
  const pb::Location* native = nullptr;
  for (const pb::Location& l : p.location()) {
    if (l.address() == 0x7f0000001234) native = &l;
  }
  ASSERT_NE(native, nullptr);
  ASSERT_EQ(native->line_size(), 2);
  EXPECT_EQ(native->line(0).line(), 42);
  const pb::Function& inner = p.function(native->line(0).function_id() - 1);
  EXPECT_EQ(Str(p, inner.name()), "inner_helper");
  EXPECT_EQ(Str(p, inner.filename()), "/src/work.cc");

  // The mappings are the processes' own, not the span of sampled addresses.
  for (const pb::Mapping& m : p.mapping()) {
    if (Str(p, m.filename()) == "[kernel.kallsyms]") continue;
    EXPECT_EQ(m.memory_start() % 0x10000, 0u) << Str(p, m.filename());
    EXPECT_EQ(m.memory_limit() - m.memory_start(), 0x10000u) << Str(p, m.filename());
  }

  // Kernel and JIT memory get bracketed names pprof will not try to open.
  std::vector<std::string> names;
  for (const pb::Mapping& m : p.mapping()) names.push_back(Str(p, m.filename()));
  EXPECT_NE(std::find(names.begin(), names.end(), "[kernel.kallsyms]"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "[perf-10.map]"), names.end());

  // Identical samples are aggregated; values are [count, period].
  ASSERT_EQ(p.sample_size(), 3);
  EXPECT_EQ(p.sample(0).value(0), 2);
  EXPECT_EQ(p.sample(0).value(1), 2000);
  ASSERT_EQ(p.sample(0).location_id_size(), 2);
  EXPECT_EQ(p.location(p.sample(0).location_id(0) - 1).address(), 0xffffffff81000010);
  bool labelled = false;
  for (const pb::Label& label : p.sample(2).label()) {
    if (Str(p, label.key()) == "thread") labelled = Str(p, label.str()) == "other";
  }
  EXPECT_TRUE(labelled);
}

TEST(PprofWriterTest, OptionsForARecordingSayWhatPeriodsMeasure) {
  fold::RecordingSummary summary;
  summary.header.event_name = "cpu-clock";
  summary.header.sample_rate = 49;
  summary.header.target = "pid 42";
  summary.header.start_time_ns = 1'000;
  summary.last_sample_ns = 5'001'000;
  PprofOptions cpu = PprofOptionsFor(summary);
  EXPECT_EQ(cpu.sample_rate, 49u);
  EXPECT_TRUE(cpu.period_type.empty());
  EXPECT_FALSE(cpu.periods_are_samples);
  EXPECT_EQ(cpu.duration_ns, 5'000'000);
  EXPECT_EQ(cpu.comments.at(1), "target: pid 42");
  EXPECT_EQ(cpu.comments.at(2), "sampling: cpu-clock, 49 Hz");

  summary.weighted = true;  // BPF counted the stacks
  EXPECT_TRUE(PprofOptionsFor(summary).periods_are_samples);
  summary.mode = "offcpu";
  summary.microseconds = true;
  PprofOptions offcpu = PprofOptionsFor(summary);
  EXPECT_EQ(offcpu.period_type, "off-cpu");
  EXPECT_EQ(offcpu.period_unit, "microseconds");
  EXPECT_FALSE(offcpu.periods_are_samples);
}

TEST(PprofWriterTest, AddressesNoMappingCoveredGetNoMapping) {
  // A frame-pointer walk through code without frame pointers: garbage
  // addresses, which must not become one mapping overlapping every real one.
  TestProfile t = Make();
  fold::Location garbage;
  garbage.code = {symbolize::CodeKind::kProcess, 10, 0xf800000000000000};
  garbage.address = 0xf800000000000000;
  fold::Location low = garbage;
  low.code.value = low.address = 0x10;
  const uint32_t a = t.profile.InternLocation(garbage);
  const uint32_t b = t.profile.InternLocation(low);
  fold::Sample s = t.profile.samples().front();
  s.stack = t.profile.InternStack({a, b, 0});
  t.profile.AddSample(s);
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(*SerializePprof(t.profile, PprofOptions())));
  EXPECT_EQ(p.location(a).mapping_id(), 0u);
  EXPECT_EQ(p.location(b).mapping_id(), 0u);
  for (const pb::Mapping& m : p.mapping()) {
    if (Str(p, m.filename()) == "[kernel.kallsyms]") continue;
    EXPECT_LT(m.memory_limit() - m.memory_start(), 0x100000u) << Str(p, m.filename());
  }
}

TEST(PprofWriterTest, CallersShareTheirModulesMapping) {
  // A return address is normalized one byte back (offset_adjust); it is the
  // same load of the module as a leaf address in it.
  TestProfile t = Make();
  fold::Location caller;
  caller.code = {symbolize::CodeKind::kNative, 0, 0x1fff};
  caller.address = 0x7f0000002000;
  caller.offset_adjust = 1;
  caller.mapping_start = 0x7f0000000000;  // the same load of the library
  caller.mapping_end = 0x7f0000010000;
  const uint32_t id = t.profile.InternLocation(caller);
  fold::Sample s = t.profile.samples().front();
  s.stack = t.profile.InternStack({0, id});
  t.profile.AddSample(s);
  PprofOptions options;
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(*SerializePprof(t.profile, options)));
  EXPECT_EQ(p.location(id).mapping_id(), p.location(0).mapping_id());
  int library_mappings = 0;
  for (const pb::Mapping& m : p.mapping()) {
    library_mappings += Str(p, m.filename()) == "/usr/lib/libwork.so";
  }
  EXPECT_EQ(library_mappings, 2);  // the loads in pid 10 and pid 20
}

TEST(PprofWriterTest, OtherEventsCountEvents) {
  TestProfile t = Make();
  PprofOptions options;
  options.event_name = "cycles";
  options.frequency_mode = false;
  options.sample_rate = 100000;
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(*SerializePprof(t.profile, options)));
  EXPECT_EQ(Str(p, p.sample_type(1).type()), "cycles");
  EXPECT_EQ(Str(p, p.sample_type(1).unit()), "count");
  EXPECT_EQ(p.period(), 100000);
}

TEST(PprofWriterTest, WeightsAndCountedStacks) {
  TestProfile t = Make();
  PprofOptions off_cpu;
  off_cpu.period_type = "off-cpu";
  off_cpu.period_unit = "microseconds";
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(*SerializePprof(t.profile, off_cpu)));
  EXPECT_EQ(Str(p, p.sample_type(1).type()), "off-cpu");
  EXPECT_EQ(Str(p, p.sample_type(1).unit()), "microseconds");
  EXPECT_EQ(p.period(), 0);

  // Stacks counted in the kernel: the period is the number of samples.
  PprofOptions counted;
  counted.periods_are_samples = true;
  ASSERT_TRUE(p.ParseFromString(*SerializePprof(t.profile, counted)));
  ASSERT_EQ(p.sample_type_size(), 1);
  ASSERT_EQ(p.sample(0).value_size(), 1);
  EXPECT_EQ(p.sample(0).value(0), 2000);
}

TEST(PprofWriterTest, GzipRoundTrips) {
  const std::string data(100000, 'x');
  absl::StatusOr<std::string> compressed = Gzip(data);
  ASSERT_TRUE(compressed.ok());
  ASSERT_GE(compressed->size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[1]), 0x8b);
  z_stream stream = {};
  ASSERT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out(data.size() + 16, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(compressed->data());
  stream.avail_in = static_cast<uInt>(compressed->size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  EXPECT_EQ(out, data);
}

TEST(PprofWriterTest, HostileNamesBecomeValidUtf8) {
  TestProfile t = Make();
  fold::Sample s = t.profile.samples().front();
  s.comm = t.profile.InternString("bad\xff\xfename\n");
  t.profile.AddSample(s);
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(*SerializePprof(t.profile, PprofOptions())));
  bool found = false;
  for (const std::string& text : p.string_table()) {
    found = found || text == "bad\xEF\xBF\xBD\xEF\xBF\xBDname\xEF\xBF\xBD";
  }
  EXPECT_TRUE(found);
}

TEST(PprofWriterTest, EmptyProfileIsValid) {
  fold::Profile empty;
  pb::Profile p;
  ASSERT_TRUE(p.ParseFromString(*SerializePprof(empty, PprofOptions())));
  EXPECT_EQ(p.sample_size(), 0);
  EXPECT_EQ(p.mapping_size(), 0);
}

}  // namespace
}  // namespace profcpu::render
