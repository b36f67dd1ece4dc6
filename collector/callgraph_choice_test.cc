#include "collector/callgraph_choice.h"

#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

TEST(CallgraphChoiceTest, Values) {
  EXPECT_EQ(ParseCallgraph("fp")->dwarf_stack_size, 0u);
  EXPECT_EQ(ParseCallgraph("fp")->leaf_stack_size, 0u);
  EXPECT_EQ(ParseCallgraph("dwarf")->dwarf_stack_size, 8192u);
  EXPECT_EQ(ParseCallgraph("dwarf")->leaf_stack_size, 0u);
  EXPECT_EQ(ParseCallgraph("dwarf,16384")->dwarf_stack_size, 16384u);
  EXPECT_EQ(ParseCallgraph("dwarf,65528")->dwarf_stack_size, 65528u);
  EXPECT_EQ(ParseCallgraph("fp+cfi")->leaf_stack_size, 32768u);
  EXPECT_EQ(ParseCallgraph("fp+cfi")->dwarf_stack_size, 0u);
  EXPECT_EQ(ParseCallgraph("fp+cfi,1024")->leaf_stack_size, 1024u);
  for (const char* bad : {"", "lbr", "dwarf,", "dwarf,0", "dwarf,12", "dwarf,65536", "dwarf,-8",
                          "dwarf,8x", "DWARF", "fp+cfi,", "fp+cfi,12", "fp+cfi512", "fp,512",
                          "dwarfx"}) {
    EXPECT_FALSE(ParseCallgraph(bad).ok()) << bad;
  }
}

TEST(CallgraphChoiceTest, SpellingReadsBackAsTheSameChoice) {
  EXPECT_EQ(CallgraphSpelling("fp", 0), "fp");
  EXPECT_EQ(CallgraphSpelling("fp+cfi", 512), "fp+cfi,512");
  EXPECT_EQ(CallgraphSpelling("dwarf", 16384), "dwarf,16384");
  // A recording from before the size was kept: the walker alone.
  EXPECT_EQ(CallgraphSpelling("dwarf", 0), "dwarf");
  EXPECT_EQ(ParseCallgraph(CallgraphSpelling("fp+cfi", 1024))->leaf_stack_size, 1024u);
}

}  // namespace
}  // namespace profcpu::collector
