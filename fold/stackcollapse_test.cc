// Corner cases of the script's behaviour; every expected output here was
// produced by stackcollapse-perf.pl (FlameGraph 41fee1f) from the same input.
#include "fold/stackcollapse.h"

#include <string>

#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

std::string Collapse(absl::string_view text, StackCollapseOptions options = {}) {
  return CollapsePerfScriptText(text, options);
}

TEST(StackCollapseTest, SumsPeriodsAndCountsOneWithout) {
  constexpr absl::string_view kText =
      "pp 1/1 [000] 1.0: 100 cycles: \n\t1 f (m)\n\n"
      "pp 1/1 [000] 2.0: 200 cycles: \n\t1 f (m)\n\n"
      "pp 1/1 [000] 3.0: cycles: \n\t1 g (m)\n\n"
      "pp 1/1 [000] 4.0: 0 cycles: \n\t1 h (m)\n\n"    // "0" is false: counts 1
      "pp 1/1 [000] 5.0: 00 cycles: \n\t1 i (m)\n\n";  // "00" is true: counts 0
  EXPECT_EQ(Collapse(kText), "pp;f 300\npp;g 1\npp;h 1\npp;i 0\n");
  StackCollapseOptions tid;
  tid.include_tid = true;
  EXPECT_EQ(Collapse(kText, tid), "pp-1/1;f 300\npp-1/1;g 1\npp-1/1;h 1\npp-1/1;i 0\n");
}

TEST(StackCollapseTest, KeepsTheFirstEventUnlessTold) {
  constexpr absl::string_view kText =
      "pp 1 1.0: 10 cycles: \n\t1 f (m)\n\n"
      "pp 1 2.0: 20 instructions: \n\t1 g (m)\n\n"
      "pp 1 3.0: 30 cycles: \n\t1 f (m)\n\n";
  StackCollapser collapser({});
  for (absl::string_view line : {"pp 1 1.0: 10 cycles: ", "\t1 f (m)", "",
                                 "pp 1 2.0: 20 instructions: ", "\t1 g (m)", ""}) {
    collapser.AddLine(line);
  }
  EXPECT_EQ(collapser.Format(), "pp;f 10\n");
  EXPECT_EQ(collapser.event_filter(), "cycles");
  EXPECT_EQ(collapser.stats().warned_event, "instructions");
  EXPECT_EQ(collapser.stats().filtered_headers, 1u);

  EXPECT_EQ(Collapse(kText), "pp;f 40\n");
  StackCollapseOptions instructions;
  instructions.event_filter = "instructions";
  EXPECT_EQ(Collapse(kText, instructions), "pp;g 20\n");
}

TEST(StackCollapseTest, AFilteredHeaderDoesNotEndTheSample) {
  constexpr absl::string_view kText =
      "pp 1 1.0: 10 cycles: \n\t1 f (m)\nqq 2 2.0: 20 instructions: \n\t1 g (m)\n\n";
  EXPECT_EQ(Collapse(kText), "pp;g;f 10\n");
  StackCollapseOptions instructions;
  instructions.event_filter = "instructions";
  EXPECT_EQ(Collapse(kText, instructions), "qq;g 20\n");
}

TEST(StackCollapseTest, OnlyABlankLineEndsASample) {
  // A second header without a blank line takes over the stack read so far.
  EXPECT_EQ(Collapse("pp 1 1.0: 10 cycles: \n\t1 f (m)\nqq 2 2.0: 20 cycles: \n\t1 g (m)\n\n"),
            "qq;g;f 20\n");
  // The last sample without its blank line is not counted.
  EXPECT_EQ(Collapse("pp 1 1.0: 10 cycles: \n\t1 f (m)\n\npp 1 1.0: 10 cycles: \n\t1 g (m)\n"),
            "pp;f 10\n");
  // A line of spaces (or a CRLF's "\r") is not blank.
  EXPECT_EQ(Collapse("pp 1 1.0: 1 ev: \n\t1 f (m)\n\r\n\t1 g (m)\n\n"), "pp;g;f 1\n");
}

TEST(StackCollapseTest, CountsBeyond64BitsPrintAsPerlDoubles) {
  constexpr absl::string_view kText =
      "pp 1 1.0: 18446744073709551615 cycles: \n\t1 f (m)\n\n"
      "pp 1 1.0: 1 cycles: \n\t1 f (m)\n\n"
      "pp 1 1.0: 99999999999999999999 cycles: \n\t1 g (m)\n\n";
  EXPECT_EQ(Collapse(kText), "pp;f 1.84467440737096e+19\npp;g 1e+20\n");
}

TEST(StackCollapseTest, HostileBytesPassThrough) {
  constexpr char kText[] =
      "p\xff 1 1.0: 1 cycles: \n\t1 f\0\xc3( (m\xfe)\ngarbage\n  \n\t1 [unknown] (/x/\xe9.so)\n\n";
  constexpr char kWant[] = "p\xff;[\xe9.so];f\0\xc3 1\n";
  const std::string text(kText, sizeof(kText) - 1);
  StackCollapser collapser({});
  LineReader reader = LineReader::FromString(text);
  absl::string_view line;
  while (reader.Next(&line)) collapser.AddLine(line);
  EXPECT_EQ(collapser.Format(), std::string(kWant, sizeof(kWant) - 1));
  EXPECT_EQ(collapser.stats().unrecognized_lines, 2u);
}

TEST(StackCollapseTest, OneByteCommsTakeTheFollowingSpace) {
  // The script's comm is at least two bytes: "a 1 ..." names the process "a ".
  EXPECT_EQ(Collapse("a  1 1.0: 1 ev: \n\t1 f (m)\n\n"), "a_;f 1\n");
}

TEST(StackCollapseTest, OverlongLinesAndHugeStacksAreBounded) {
  std::string text = "pp 1 1.0: 1 ev: \n\t1 " + std::string(100, 'x') + " (m)\n\t1 g (m)\n\n";
  LineReader reader = LineReader::FromString(text, /*max_line_bytes=*/64);
  std::string folded;
  OutputBuffer out(&folded);
  StackCollapseStats stats;
  ASSERT_TRUE(CollapsePerfScript(reader, {}, &out, &stats).ok());
  EXPECT_EQ(folded, "pp;g 1\n");
  EXPECT_EQ(stats.overlong_lines, 1u);

  StackCollapseOptions small;
  small.max_stack_bytes = 3;
  StackCollapser collapser(small);
  for (absl::string_view line : {"pp 1 1.0: 1 ev: ", "\t1 abcd (m)", "\t1 e (m)", ""}) {
    collapser.AddLine(line);
  }
  EXPECT_EQ(collapser.Format(), "pp;abcd 1\n");
  EXPECT_EQ(collapser.stats().truncated_stacks, 1u);
}

TEST(StackCollapseTest, SortsBytewise) {
  EXPECT_EQ(Collapse("pp 1 1.0: 1 ev: \n\t1 b (m)\n\npp 1 1.0: 1 ev: \n\t1 \xc3\xa9 (m)\n\n"
                     "pp 1 1.0: 1 ev: \n\t1 B (m)\n\npp 1 1.0: 1 ev: \n\t1 a!b (m)\n\n"),
            "pp;B 1\npp;a!b 1\npp;b 1\npp;\xc3\xa9 1\n");
}

}  // namespace
}  // namespace profcpu::fold
