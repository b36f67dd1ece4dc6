#include "fold/perf_script_reader.h"

#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

HeaderLine Header(absl::string_view line) {
  HeaderLine header;
  EXPECT_TRUE(ParseHeaderLine(line, &header)) << line;
  return header;
}

TEST(PerfScriptReaderTest, HeaderShapes) {
  HeaderLine h = Header("swapper     0/0     [000]   192.274019:   10101010 cpu-clock: ");
  EXPECT_EQ(h.comm, "swapper");
  EXPECT_EQ(h.pid, "?");  // a tid of "0" is false in Perl: taken as "no tid"
  EXPECT_EQ(h.tid, "0");
  EXPECT_TRUE(h.has_event);
  EXPECT_EQ(h.period, "10101010");
  EXPECT_EQ(h.event, "cpu-clock");

  h = Header("V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:");
  EXPECT_EQ(h.comm, "V8 WorkerThread");
  EXPECT_EQ(h.pid, "24636");
  EXPECT_EQ(h.tid, "25607");
  EXPECT_EQ(h.event, "cycles");

  h = Header("java 12688 [002] 6544038.708352: 235 cpu-clock: ");
  EXPECT_EQ(h.pid, "?");
  EXPECT_EQ(h.tid, "12688");

  h = Header("emulator  4152 75695.008865:          1 cycles:u: ");
  EXPECT_EQ(h.comm, "emulator");
  EXPECT_EQ(h.event, "cycles:u");
  EXPECT_EQ(h.period, "1");

  h = Header("iperf 27409/28744 [000] 441995.133575: cpu-clock: ");
  EXPECT_TRUE(h.has_event);
  EXPECT_EQ(h.period, "");
  EXPECT_EQ(h.event, "cpu-clock");

  h = Header("java 19983 cycles:");  // no period and no ':' before: no event
  EXPECT_FALSE(h.has_event);

  h = Header("perf 1 [000] 1.0: 5 sched:sched_switch: prev_comm=a");
  EXPECT_FALSE(h.has_event);
}

TEST(PerfScriptReaderTest, HeaderBacktrackingCorners) {
  // The comm is at least two bytes, so it may swallow the space after a
  // one-byte name.
  EXPECT_EQ(Header("a  12 x").comm, "a ");
  // A digit run not followed by whitespace cannot be the pid.
  HeaderLine h = Header("foo 123abc 456 x");
  EXPECT_EQ(h.comm, "foo 123abc");
  EXPECT_EQ(h.tid, "456");
  h = Header("xx 5//6 y");
  EXPECT_EQ(h.pid, "5");
  EXPECT_EQ(h.tid, "6");
  h = Header("xx 5/ y");
  EXPECT_EQ(h.pid, "?");
  EXPECT_EQ(h.tid, "5");

  HeaderLine none;
  EXPECT_FALSE(ParseHeaderLine("\tffff foo (bar)", &none));
  EXPECT_FALSE(ParseHeaderLine("a 12", &none));  // needs whitespace after the id
  EXPECT_FALSE(ParseHeaderLine("ab", &none));
  EXPECT_FALSE(ParseHeaderLine("x 5 y", &none));  // a one-byte comm cannot end at 1
}

TEST(PerfScriptReaderTest, HeaderEventEnd) {
  absl::string_view period, event;
  EXPECT_TRUE(ParseHeaderEvent("x:  123: ", &period, &event));  // digits become the event
  EXPECT_EQ(period, "");
  EXPECT_EQ(event, "123");
  EXPECT_FALSE(ParseHeaderEvent("x: 1 2 ev:", &period, &event));
  EXPECT_FALSE(ParseHeaderEvent("x: :", &period, &event));
  EXPECT_TRUE(ParseHeaderEvent("a:\t7\tev:\r", &period, &event));
  EXPECT_EQ(period, "7");
  EXPECT_EQ(event, "ev");
}

FrameLine Frame(absl::string_view line) {
  FrameLine frame;
  EXPECT_TRUE(ParseFrameLine(line, &frame)) << line;
  return frame;
}

TEST(PerfScriptReaderTest, FrameShapes) {
  FrameLine f = Frame("\tffffffff821f236b pv_native_safe_halt+0xb ([kernel.kallsyms])");
  EXPECT_EQ(f.pc, "ffffffff821f236b");
  EXPECT_EQ(f.symbol, "pv_native_safe_halt+0xb");
  EXPECT_EQ(f.module, "[kernel.kallsyms]");

  f = Frame("  dd777 v8::Call(v8::Isolate*, bool) (/tmp/node-v011)");
  EXPECT_EQ(f.symbol, "v8::Call(v8::Isolate*, bool)");
  EXPECT_EQ(f.module, "/tmp/node-v011");

  f = Frame("ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])");  // no indent
  EXPECT_EQ(f.pc, "ffffffff8103d0ca");

  f = Frame("\t7f00 f+0x1 (inlined)");
  EXPECT_EQ(f.module, "inlined");
}

TEST(PerfScriptReaderTest, FrameBacktrackingCorners) {
  FrameLine f = Frame("x f (m (n))");  // the module starts at the last " ("
  EXPECT_EQ(f.symbol, "f (m");
  EXPECT_EQ(f.module, "n)");
  f = Frame("x f (m) (n");  // ... that has a ')' after it
  EXPECT_EQ(f.symbol, "f");
  EXPECT_EQ(f.module, "m");
  f = Frame("  abc  (foo)");  // the symbol takes a space back
  EXPECT_EQ(f.pc, "abc");
  EXPECT_EQ(f.symbol, " ");
  f = Frame("ab (x)");  // ... or a byte of the pc
  EXPECT_EQ(f.pc, "a");
  EXPECT_EQ(f.symbol, "b");
  f = Frame("\t12 f (x) trailing");
  EXPECT_EQ(f.module, "x");

  FrameLine none;
  EXPECT_FALSE(ParseFrameLine("a (x)", &none));
  EXPECT_FALSE(ParseFrameLine("\t1 (x)", &none));
  EXPECT_FALSE(ParseFrameLine("\t(x) y (z)", &none));
  EXPECT_FALSE(ParseFrameLine("\tabc def", &none));
  EXPECT_FALSE(ParseFrameLine("\tabc def (x", &none));
}

TEST(PerfScriptReaderTest, ClassifyLine) {
  HeaderLine header;
  FrameLine frame;
  EXPECT_EQ(ClassifyLine("", &header, &frame), LineKind::kBlank);
  EXPECT_EQ(ClassifyLine("# cmdline : perf record", &header, &frame), LineKind::kComment);
  EXPECT_EQ(ClassifyLine("java 1 x: 1 ev: ", &header, &frame), LineKind::kHeader);
  EXPECT_EQ(ClassifyLine("\t1 f (m)", &header, &frame), LineKind::kFrame);
  EXPECT_EQ(ClassifyLine(" ", &header, &frame), LineKind::kUnrecognized);
  EXPECT_EQ(ClassifyLine("\r", &header, &frame), LineKind::kUnrecognized);
}

}  // namespace
}  // namespace profcpu::fold
