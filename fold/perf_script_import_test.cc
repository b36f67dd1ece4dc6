#include "fold/perf_script_import.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "base/file_io.h"
#include "fold/folded_writer.h"
#include "fold/perf_script_reader.h"
#include "fold/perf_script_writer.h"
#include "fold/profile_test_util.h"
#include "fold/stackcollapse.h"
#include "gtest/gtest.h"

#ifndef PROFCPU_STACKCOLLAPSE_TESTDATA
#define PROFCPU_STACKCOLLAPSE_TESTDATA "/work/shared/testdata/stackcollapse-perf"
#endif

namespace profcpu::fold {
namespace {

using testing::ProfileMaker;

ImportedProfile Import(absl::string_view text) {
  LineReader reader = LineReader::FromString(text);
  absl::StatusOr<ImportedProfile> imported = ImportPerfScript(reader);
  EXPECT_TRUE(imported.ok()) << imported.status();
  return imported.ok() ? *std::move(imported) : ImportedProfile();
}

TEST(PerfScriptImportTest, ReadsPerfHeadersAndFrames) {
  ImportedProfile imported = Import(
      "# comment\n"
      "V8 WorkerThread 24636/25607 [002] 94564.109216: 100 cycles:u: \n"
      "\t    55d0c0de1234 inner+0x11 (inlined)\n"
      "\t    55d0c0de1234 outer(int)+0x34 (/usr/bin/app)\n"
      "\tffffffff81000010 [unknown] ([kernel.kallsyms])\n"
      "\n"
      "java 12688 6544038.7: cpu-clock: \n"
      "\t7f00 Lfoo;.bar (/tmp/perf-1.map)\n"
      "garbage\n");  // no final blank line: still a sample
  const Profile& profile = imported.profile;
  ASSERT_EQ(profile.samples().size(), 2u);
  EXPECT_EQ(imported.stats.samples, 2u);
  EXPECT_EQ(imported.stats.unrecognized_lines, 1u);

  const Sample& first = profile.samples()[0];
  EXPECT_EQ(profile.string(first.comm), "V8 WorkerThread");
  EXPECT_EQ(first.pid, 24636u);
  EXPECT_EQ(first.tid, 25607u);
  EXPECT_EQ(first.cpu, 2u);
  EXPECT_EQ(first.time_ns, 94564109216000u);
  EXPECT_EQ(first.period, 100u);
  EXPECT_EQ(profile.string(first.event), "cycles:u");
  const std::vector<uint32_t>& stack = profile.stack(first.stack);
  ASSERT_EQ(stack.size(), 2u);
  const Location& app = profile.location(stack[0]);
  EXPECT_EQ(app.address, 0x55d0c0de1234u);
  EXPECT_FALSE(app.kernel);
  const symbolize::Symbolization* symbols = profile.symbols().Find(app.code);
  ASSERT_NE(symbols, nullptr);
  EXPECT_EQ(symbols->module, "/usr/bin/app");
  ASSERT_EQ(symbols->frames.size(), 2u);
  EXPECT_EQ(symbols->frames[0].function, "inner");
  EXPECT_EQ(symbols->frames[0].offset, 0x11u);
  EXPECT_TRUE(symbols->frames[0].inlined);
  EXPECT_EQ(symbols->frames[1].function, "outer(int)");
  EXPECT_FALSE(symbols->frames[1].inlined);
  const Location& kernel = profile.location(stack[1]);
  EXPECT_TRUE(kernel.kernel);
  EXPECT_TRUE(profile.symbols().Find(kernel.code)->frames.empty());

  const Sample& second = profile.samples()[1];
  EXPECT_EQ(second.pid, 12688u);  // one id: taken for both
  EXPECT_EQ(second.tid, 12688u);
  EXPECT_EQ(second.time_ns, 6544038700000000u);
  EXPECT_EQ(second.period, 1u);
  EXPECT_EQ(profile.string(second.event), "cpu-clock");
}

TEST(PerfScriptImportTest, SharesLocationsAcrossSamples) {
  ImportedProfile imported = Import(
      "xx 1/1 [000] 1.0: 1 ev: \n\t10 f+0x1 (/m)\n\t20 g+0x2 (/m)\n\n"
      "xx 1/1 [000] 2.0: 1 ev: \n\t10 f+0x1 (/m)\n\t20 g+0x2 (/m)\n\n"
      "xx 1/1 [000] 3.0: 1 ev: \n\t10 f+0x1 (/other)\n\n");
  EXPECT_EQ(imported.profile.location_count(), 3u);
  EXPECT_EQ(imported.profile.stack_count(), 2u);
}

// Writing an imported profcpu text gives the same text back.
TEST(PerfScriptImportTest, RoundTripsTheWriter) {
  ProfileMaker m;
  uint32_t k1 = m.Location(0xffffffff821f236b, true, "[kernel.kallsyms]",
                           {{"pv_native_safe_halt", 0xb}});
  uint32_t k2 = m.Location(0xffffffff81000010, true, "", {});
  uint32_t u1 = m.Location(0x55d0c0de1234, false, "/usr/bin/app",
                           {{"inner_fn", 0x10, true}, {"mid", 0x1, true}, {"outer_fn(int)", 0x33}},
                           1);
  uint32_t u2 = m.Location(0x7f0000001000, false, "/usr/lib/libc.so.6", {});
  uint32_t n1 = m.Location(0, false, "", {});
  uint32_t h1 = m.Location(0x400000, false, "/tmp/a (deleted)\n", {{"evil\nname\t(x)\r\xff", 0}});
  m.Sample("swapper", 0, 0, 0, 192274019000, 10101010, "cpu-clock", {k1});
  m.Sample("V8 Worker", 42, 43, 3, 192275000999, 10101010, "cycles", {k2, u1, u2, n1});
  m.Sample("a", 42, 42, 12, 193000000000, 1, "cpu-clock", {h1, u1});
  const std::string text = FormatPerfScript(m.profile());
  ImportedProfile imported = Import(text);
  EXPECT_EQ(FormatPerfScript(imported.profile), text);
  for (bool tid : {false, true}) {
    FoldOptions options;
    options.include_tid = tid;
    EXPECT_EQ(FormatFolded(FoldProfile(imported.profile, options)),
              FormatFolded(FoldProfile(m.profile(), options)));
  }
}

// Whatever the input, the imported Profile writes text every reader parses.
TEST(PerfScriptImportTest, GarbageInWellFormedTextOut) {
  std::mt19937 random(3);
  const std::vector<std::string> atoms = {" ", "\t", "\n", "\n\n", "0", "12", "/", ":", "(",
                                          ")", " (", "[unknown]", "+0x1", "ev:", "x", "\xff",
                                          "\0", "(inlined)", "1.5:", "[001]", "#"};
  std::string text;
  for (int i = 0; i < 20000; ++i) text += atoms[random() % atoms.size()];
  ImportedProfile imported = Import(text);
  EXPECT_GT(imported.stats.samples, 0u);
  const std::string written = FormatPerfScript(imported.profile);
  for (absl::string_view line : absl::StrSplit(written, '\n')) {
    HeaderLine header;
    FrameLine frame;
    LineKind kind = ClassifyLine(line, &header, &frame);
    EXPECT_TRUE(kind == LineKind::kBlank || kind == LineKind::kFrame ||
                kind == LineKind::kHeader)
        << line;
  }
  EXPECT_EQ(FormatPerfScript(Import(written).profile), written);
}

// Importing perf's own output and folding the Profile gives what the script
// gives, on the script's test inputs. (Completed with a final blank line:
// the script drops a last sample without one, the importer keeps it.)
TEST(PerfScriptImportTest, FoldsTheScriptTestInputsAsTheScriptDoes) {
  const std::string root = PROFCPU_STACKCOLLAPSE_TESTDATA;
  for (const char* name : {"perf-vertx-stacks-01", "perf-java-stacks-01", "perf-numa-stacks-01",
                           "perf-iperf-stacks-pidtid-01", "perf-js-stacks-01",
                           "perf-mirageos-stacks-01", "perf-rust-Yamakaky-dcpu",
                           "perf-cycles-instructions-01", "perf-java-faults-01",
                           "perf-funcab-cmd-01", "perf-funcab-pid-01", "perf-dd-stacks-01",
                           "perf-java-stacks-02"}) {
    absl::StatusOr<std::string> text =
        base::ReadFileBounded(root + "/input/" + name + ".txt", size_t{64} << 20);
    ASSERT_TRUE(text.ok()) << text.status();
    if (!absl::EndsWith(*text, "\n\n")) text->append("\n");
    ImportedProfile imported = Import(*text);
    EXPECT_EQ(imported.stats.unrecognized_lines, 0u) << name;
    // The one deliberate difference: blank symbols are unnamed frames.
    const std::string named = absl::StrReplaceAll(*text, {{"  (/", " [unknown] (/"}});
    StackCollapseOptions collapse;
    collapse.annotate_kernel = collapse.annotate_jit = true;
    FoldOptions fold;
    fold.annotate_kernel = fold.annotate_jit = true;
    fold.weight_by_period = true;
    EXPECT_EQ(FormatFolded(FoldProfile(imported.profile, fold)),
              CollapsePerfScriptText(named, collapse))
        << name;
  }
}

}  // namespace
}  // namespace profcpu::fold
