#include "symbolize/symbol_snapshot.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/byte_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::symbolize {
namespace {

using ::testing::HasSubstr;

std::vector<Module> SampleModules() {
  Module libc;
  libc.path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  libc.dev_major = 8;
  libc.dev_minor = 1;
  libc.inode = 123456;
  libc.build_id = std::string("\x01\x02\x00\xff", 4);
  libc.example_pid = 42;
  libc.segments = {{0, 0x28000, 0, false}, {0x28000, 0x15000, 0x28000, true}};
  libc.debug_info = true;
  Module app;
  app.path = "/app/server";
  app.example_pid = 43;
  return {libc, app};
}

SymbolTable SampleTable() {
  SymbolTable table;
  table.Insert({CodeKind::kKernel, 0, 0xffffffff81001010},
               {"[kernel.kallsyms]", {{"do_syscall_64", 0x10, false, "", 0}}});
  table.Insert({CodeKind::kNative, 0, 0x29d90},
               {"/usr/lib/x86_64-linux-gnu/libc.so.6",
                {{"inlined_helper", 4, true, "helper.h", 12},
                 {"__libc_start_call_main", 0x80, false, "libc-start.c", 74}}});
  table.Insert({CodeKind::kNative, 1, 0x1000}, {"/app/server", {}});
  table.Insert(
      {CodeKind::kProcess, 42, 0x7f0000001004},
      {"/tmp/perf-42.map", {{"instance void [App] App::Run()[OptimizedTier1]", 4, false, "", 0}}});
  table.Insert({CodeKind::kProcess, 42, 0x7f0000009000}, {"//anon", {}});
  // The same JIT address at two times: two methods (code_location.h, epoch).
  table.Insert({CodeKind::kProcess, 42, 0x7f0000002000, 1},
               {"/tmp/perf-42.map", {{"First()", 0, false, "a.js", 3}}});
  table.Insert({CodeKind::kProcess, 42, 0x7f0000002000, 2},
               {"/tmp/perf-42.map", {{"Second()", 0, false, "a.js", 9}}});
  return table;
}

void ExpectSameTables(const SymbolTable& a, const SymbolTable& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [location, s] : a.entries()) {
    const Symbolization* other = b.Find(location);
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(other->module, s.module);
    ASSERT_EQ(other->frames.size(), s.frames.size());
    for (size_t i = 0; i < s.frames.size(); ++i) {
      EXPECT_EQ(other->frames[i].function, s.frames[i].function);
      EXPECT_EQ(other->frames[i].offset, s.frames[i].offset);
      EXPECT_EQ(other->frames[i].inlined, s.frames[i].inlined);
      EXPECT_EQ(other->frames[i].source_file, s.frames[i].source_file);
      EXPECT_EQ(other->frames[i].line, s.frames[i].line);
    }
  }
}

TEST(SymbolSnapshotTest, RoundTrips) {
  const SymbolTable table = SampleTable();
  const std::vector<Module> modules = SampleModules();
  std::string blob = SerializeSnapshot(table, modules);
  EXPECT_EQ(blob.substr(0, 8), "PCSYMSNP");

  SymbolTable parsed;
  std::vector<Module> parsed_modules;
  ASSERT_TRUE(ParseSnapshot(blob, &parsed, &parsed_modules).ok());
  ExpectSameTables(table, parsed);
  ASSERT_EQ(parsed_modules.size(), 2u);
  EXPECT_EQ(parsed_modules[0].path, modules[0].path);
  EXPECT_EQ(parsed_modules[0].dev_major, 8u);
  EXPECT_EQ(parsed_modules[0].dev_minor, 1u);
  EXPECT_EQ(parsed_modules[0].inode, 123456u);
  EXPECT_EQ(parsed_modules[0].build_id, modules[0].build_id);
  EXPECT_EQ(parsed_modules[0].example_pid, 42u);
  EXPECT_EQ(parsed_modules[0].segments, modules[0].segments);
  EXPECT_TRUE(parsed_modules[1].segments.empty());
  EXPECT_TRUE(parsed_modules[0].debug_info);
  EXPECT_FALSE(parsed_modules[1].debug_info);
  EXPECT_EQ(parsed.Find({CodeKind::kProcess, 42, 0x7f0000002000, 2})->frames[0].function,
            "Second()");
  EXPECT_EQ(parsed_modules[1].path, "/app/server");
}

TEST(SymbolSnapshotTest, SameTableGivesSameBytes) {
  std::string blob = SerializeSnapshot(SampleTable(), SampleModules());
  SymbolTable parsed;
  std::vector<Module> modules;
  ASSERT_TRUE(ParseSnapshot(blob, &parsed, &modules).ok());
  EXPECT_EQ(SerializeSnapshot(parsed, modules), blob);
}

TEST(SymbolSnapshotTest, EmptyRoundTrips) {
  std::string blob = SerializeSnapshot(SymbolTable(), {});
  SymbolTable parsed = SampleTable();
  std::vector<Module> modules = SampleModules();
  ASSERT_TRUE(ParseSnapshot(blob, &parsed, &modules).ok());
  EXPECT_EQ(parsed.size(), 0u);
  EXPECT_TRUE(modules.empty());
}

TEST(SymbolSnapshotTest, EveryTruncationIsRejectedAndLeavesOutputsAlone) {
  const std::string blob = SerializeSnapshot(SampleTable(), SampleModules());
  for (size_t size = 0; size < blob.size(); ++size) {
    SymbolTable parsed;
    parsed.Insert({CodeKind::kKernel, 0, 1}, {"sentinel", {}});
    std::vector<Module> modules(1);
    absl::Status status = ParseSnapshot(blob.substr(0, size), &parsed, &modules);
    ASSERT_FALSE(status.ok()) << size;
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << size;
    EXPECT_EQ(parsed.size(), 1u);
    EXPECT_EQ(modules.size(), 1u);
  }
}

TEST(SymbolSnapshotTest, TrailingBytesAreRejected) {
  std::string blob = SerializeSnapshot(SampleTable(), SampleModules()) + "x";
  SymbolTable parsed;
  std::vector<Module> modules;
  absl::Status status = ParseSnapshot(blob, &parsed, &modules);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("after the last entry"));
}

TEST(SymbolSnapshotTest, WrongMagicAndNewerVersionAreRejected) {
  std::string blob = SerializeSnapshot(SampleTable(), SampleModules());
  SymbolTable parsed;
  std::vector<Module> modules;
  std::string bad_magic = blob;
  bad_magic[0] = 'X';
  EXPECT_THAT(ParseSnapshot(bad_magic, &parsed, &modules).message(), HasSubstr("bad magic"));
  std::string newer = blob;
  newer[8] = 4;  // version u32 follows the magic
  absl::Status status = ParseSnapshot(newer, &parsed, &modules);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("version 4"));
}

// A hand-built snapshot, to plant one specific inconsistency at a time.
std::string Handmade(uint32_t string_count, uint32_t module_path_index, uint8_t kind,
                     uint32_t space, uint32_t frame_count, uint8_t frame_flags,
                     bool duplicate_entry = false) {
  std::string out = "PCSYMSNP";
  base::ByteWriter w(&out);
  w.U32(1);
  w.U32(string_count);
  w.String("");
  for (uint32_t i = 1; i < string_count; ++i) w.String("s");
  w.U32(1);  // one module
  w.U32(module_path_index);
  w.U32(0);
  w.U32(0);
  w.U64(0);
  w.U32(0);
  w.U32(0);
  w.U32(duplicate_entry ? 2 : 1);
  for (int e = 0; e < (duplicate_entry ? 2 : 1); ++e) {
    w.U8(kind);
    w.U32(space);
    w.U64(0x1000);
    w.U32(0);
    w.U32(frame_count);
    for (uint32_t i = 0; i < std::min(frame_count, 1u); ++i) {  // a bad count lies
      w.U32(0);
      w.U64(0);
      w.U8(frame_flags);
      w.U32(0);
      w.U32(0);
    }
  }
  return out;
}

// Handmade() writes version 1 (no segments, no epochs), which stays readable.
TEST(SymbolSnapshotTest, InconsistenciesAreRejected) {
  SymbolTable parsed;
  std::vector<Module> modules;
  auto parse = [&](const std::string& blob) { return ParseSnapshot(blob, &parsed, &modules); };
  ASSERT_TRUE(parse(Handmade(2, 1, 2, 0, 1, 1)).ok());  // the baseline is valid
  EXPECT_NE(parsed.Find({CodeKind::kNative, 0, 0x1000, 0}), nullptr);
  ASSERT_EQ(modules.size(), 1u);
  EXPECT_TRUE(modules[0].segments.empty());

  EXPECT_THAT(parse(Handmade(2, 7, 2, 0, 1, 0)).message(), HasSubstr("string"));
  EXPECT_THAT(parse(Handmade(2, 1, 9, 0, 1, 0)).message(), HasSubstr("unknown kind"));
  EXPECT_THAT(parse(Handmade(2, 1, 0, 0, 1, 0)).message(), HasSubstr("unknown kind"));
  EXPECT_THAT(parse(Handmade(2, 1, 2, 5, 1, 0)).message(), HasSubstr("names module 5"));
  EXPECT_THAT(parse(Handmade(2, 1, 2, 0, 1, 0x80)).message(), HasSubstr("frame flags"));
  EXPECT_THAT(parse(Handmade(2, 1, 2, 0, 0xffffffff, 0)).message(), HasSubstr("frame count"));
  EXPECT_THAT(parse(Handmade(2, 1, 2, 0, 1, 0, true)).message(), HasSubstr("repeated"));
  EXPECT_THAT(parse(Handmade(0, 0, 2, 0, 1, 0)).message(), HasSubstr("string count"));
}

TEST(SymbolSnapshotTest, HugeCountsAreRejectedBeforeAllocating) {
  std::string out = "PCSYMSNP";
  base::ByteWriter w(&out);
  w.U32(1);
  w.U32(0xffffffff);  // four billion strings in a few bytes
  w.String("");
  SymbolTable parsed;
  std::vector<Module> modules;
  EXPECT_EQ(ParseSnapshot(out, &parsed, &modules).code(), absl::StatusCode::kDataLoss);
}

TEST(SymbolSnapshotTest, CorruptBytesNeverCrash) {
  const std::string blob = SerializeSnapshot(SampleTable(), SampleModules());
  for (size_t pos = 0; pos < blob.size(); ++pos) {
    for (char value : {'\x00', '\x01', '\x7f', '\xff'}) {
      std::string corrupt = blob;
      corrupt[pos] = value;
      SymbolTable parsed;
      std::vector<Module> modules;
      (void)ParseSnapshot(corrupt, &parsed, &modules);
    }
  }
}

}  // namespace
}  // namespace profcpu::symbolize
