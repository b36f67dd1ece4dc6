#include "fold/perf_script_writer.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
// GCC 12 reports -Wmaybe-uninitialized inside libstdc++'s regex compiler
// when built with sanitizers (a false positive in std::function's copy).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "base/unique_fd.h"
#include "fold/perf_script_reader.h"
#include "fold/profile_test_util.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using testing::ProfileMaker;

// Kernel and user frames, an inlined frame, unnamed frames with and without
// a module, a JIT frame and a hostile name.
Profile MakeScriptProfile() {
  ProfileMaker m;
  uint32_t k1 = m.Location(0xffffffff821f236b, true, "[kernel.kallsyms]",
                           {{"pv_native_safe_halt", 0xb}});
  uint32_t k2 = m.Location(0xffffffff81000010, true, "", {});
  uint32_t u1 = m.Location(0x55d0c0de1234, false, "/usr/bin/app",
                           {{"inner_fn", 0x10, true}, {"outer_fn(int)", 0x33}}, 1);
  uint32_t u2 = m.Location(0x7f0000001000, false, "/usr/lib/x86_64-linux-gnu/libc.so.6", {});
  uint32_t n1 = m.Location(0, false, "", {});
  uint32_t j1 = m.Location(0x7f1234567890, false, "/tmp/perf-42.map",
                           {{"System.Threading.Thread.Run()[Optimized]", 0x20}});
  uint32_t h1 = m.Location(0x400000, false, "/tmp/a (deleted)\n", {{"evil\nname\t(x)\r\xff", 0}});
  m.Sample("swapper", 0, 0, 0, 192274019000, 10101010, "cpu-clock", {k1});
  m.Sample("V8 Worker", 42, 43, 3, 192275000999, 10101010, "cpu-clock", {k2, u1, u2, n1});
  m.Sample("dotnet", 42, 42, 12, 1000000, 1, "cpu-clock", {j1, h1});
  return std::move(m.profile());
}

constexpr absl::string_view kWant =
    "swapper     0/0     [000]   192.274019:   10101010 cpu-clock: \n"
    "\tffffffff821f236b pv_native_safe_halt+0xb ([kernel.kallsyms])\n"
    "\n"
    "V8 Worker    42/43    [003]   192.275000:   10101010 cpu-clock: \n"
    "\tffffffff81000010 [unknown] ([kernel.kallsyms])\n"
    "\t    55d0c0de1234 inner_fn+0x11 (inlined)\n"
    "\t    55d0c0de1234 outer_fn(int)+0x34 (/usr/bin/app)\n"
    "\t    7f0000001000 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\t               0 [unknown] ([unknown])\n"
    "\n"
    "dotnet    42/42    [012]     0.001000:          1 cpu-clock: \n"
    "\t    7f1234567890 System.Threading.Thread.Run()[Optimized]+0x20 (/tmp/perf-42.map)\n"
    "\t          400000 evil?name?(x)??+0x0 (/tmp/a [deleted]?)\n"
    "\n";

TEST(PerfScriptWriterTest, WritesPerf61Text) {
  EXPECT_EQ(FormatPerfScript(MakeScriptProfile()), kWant);
}

// FlameScope's parser (Netflix/flamescope app/perf/regexp.py and
// flame_graph.py): '#' lines skipped, lines starting with '\t' are frames,
// others are event lines; the first non-'#' line must be an event line.
void ExpectFlameScopeParses(absl::string_view text) {
  const std::regex event_re(" +([0-9.]+): .+?:");
  const std::regex frame_re("^[\\t ]*[0-9a-fA-F]+ (.+) \\((.*?)\\)$");
  const std::regex comm_re("^ *([^0-9]+)");
  bool seen_event = false;
  ASSERT_TRUE(absl::EndsWith(text, "\n"));
  text.remove_suffix(1);
  for (absl::string_view piece : absl::StrSplit(text, '\n')) {
    std::string line(piece);
    if (line.empty()) continue;
    if (line[0] == '#') {
      EXPECT_FALSE(seen_event) << "comment after samples: " << line;
      continue;
    }
    if (line[0] == '\t') {
      EXPECT_TRUE(seen_event);
      std::smatch match;
      EXPECT_TRUE(std::regex_search(line, match, frame_re)) << line;
      continue;
    }
    EXPECT_TRUE(std::regex_search(line, event_re)) << line;
    EXPECT_TRUE(std::regex_search(line, comm_re)) << line;
    seen_event = true;
  }
  EXPECT_TRUE(seen_event);
}

TEST(PerfScriptWriterTest, EveryLineParsesForFlameScopeAndStackcollapse) {
  const std::string text = FormatPerfScript(MakeScriptProfile());
  ExpectFlameScopeParses(text);
  // And stackcollapse-perf.pl sees headers, frames and blank lines only.
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  lines.pop_back();  // after the final '\n'
  for (absl::string_view line : lines) {
    HeaderLine header;
    FrameLine frame;
    LineKind kind = ClassifyLine(line, &header, &frame);
    if (line.empty()) {
      EXPECT_EQ(kind, LineKind::kBlank);
    } else if (line[0] == '\t') {
      EXPECT_EQ(kind, LineKind::kFrame) << line;
    } else {
      ASSERT_EQ(kind, LineKind::kHeader) << line;
      EXPECT_TRUE(header.has_event) << line;
      EXPECT_EQ(header.event, "cpu-clock");
    }
  }
}

// A one-byte comm before a pid wider than %5d pads ("a 4194303/...") would
// be read as part of a longer comm by the /^(\S.+?)\s+(\d+)/ header pattern.
TEST(PerfScriptWriterTest, OneByteCommWithAWidePidReadsBack) {
  ProfileMaker m;
  uint32_t u1 = m.Location(0x400000, false, "/usr/bin/a", {{"main", 0}});
  m.Sample("a", 4194303, 4194303, 1, 1000000, 1, "cpu-clock", {u1});
  const std::string text = FormatPerfScript(m.profile());
  HeaderLine header;
  FrameLine frame;
  const std::string line = text.substr(0, text.find('\n'));
  ASSERT_EQ(ClassifyLine(line, &header, &frame), LineKind::kHeader);
  EXPECT_EQ(absl::StripTrailingAsciiWhitespace(header.comm), "a");
  EXPECT_EQ(header.pid, "4194303");
  EXPECT_EQ(header.tid, "4194303");
  ExpectFlameScopeParses(text);
}

TEST(PerfScriptWriterTest, CommentBlockAndPaddedEvents) {
  ProfileMaker m;
  uint32_t f = m.Location(0x1000, false, "/bin/x", {{"main", 4}});
  m.Sample("x\ny", 7, 8, 1, 5000000000, 100, "cycles", {f});
  m.Sample("#x", 7, 8, 1, 5000001000, 100, "instructions", {f});
  m.Sample("", 7, 8, 1, 5000002000, 100, "cycles", {});
  PerfScriptWriteOptions options;
  options.header.emplace();
  options.header->profcpu_version = "0.1.0";
  options.header->target = "pid 7 (x)";
  options.header->event = "cycles\n";
  options.header->samples = 3;
  options.header->losses = {{"ring buffer full", 2}};
  options.header->extra = {{"kernel", "6.1.0"}};
  const std::string text = FormatPerfScript(m.profile(), options);
  EXPECT_EQ(text,
            "# ========\n"
            "# profcpu version : 0.1.0\n"
            "# target : pid 7 (x)\n"
            "# event : cycles?\n"
            "# samples : 3\n"
            "# lost (ring buffer full) : 2\n"
            "# kernel : 6.1.0\n"
            "# ========\n"
            "#\n"
            "x?y     7/8     [001]     5.000000:        100       cycles: \n"
            "\t            1000 main+0x4 (/bin/x)\n"
            "\n"
            "?x     7/8     [001]     5.000001:        100 instructions: \n"
            "\t            1000 main+0x4 (/bin/x)\n"
            "\n"
            "?     7/8     [001]     5.000002:        100       cycles: \n"
            "\n");
  ExpectFlameScopeParses(text);
}

TEST(PerfScriptWriterTest, SanitizesUtf8) {
  ProfileMaker m;
  uint32_t f = m.Location(0x1000, false, "/bin/\xc3\xa9",
                          {{"caf\xc3\xa9\xc2\x85\xe0\x80\x80\xed\xa0\x80\xf4\x90\x80\x80\xf0\x9f\x94\xa5", 0}});
  m.Sample("ok", 1, 2, 0, 0, 1, "cpu-clock", {f});
  // Well-formed UTF-8 stays; C1 controls, overlong forms, surrogates and
  // code points above U+10FFFF become '?' (per byte when ill-formed).
  EXPECT_EQ(FormatPerfScript(m.profile()),
            "ok     1/2     [000]     0.000000:          1 cpu-clock: \n"
            "\t            1000 caf\xc3\xa9???????????\xf0\x9f\x94\xa5+0x0 (/bin/\xc3\xa9)\n"
            "\n");
}

TEST(PerfScriptWriterTest, WritesAFile) {
  char path[] = "/tmp/perf_script_writer_test_XXXXXX";
  ASSERT_TRUE(base::UniqueFd(mkstemp(path)).valid());  // made, then closed
  ASSERT_TRUE(WritePerfScriptFile(MakeScriptProfile(), {}, path).ok());
  std::FILE* file = std::fopen(path, "r");
  ASSERT_NE(file, nullptr);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), file));
  std::fclose(file);
  unlink(path);
  EXPECT_EQ(text, kWant);
  EXPECT_FALSE(WritePerfScriptFile(MakeScriptProfile(), {}, "/nonexistent/dir/x").ok());
}

}  // namespace
}  // namespace profcpu::fold
