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

// -mmap-pages 1 (4 KiB per CPU) with the default 32 KiB copy: the kernel
// would drop every sample without a word. The default shrinks to fit;
// bytes the user asked for are refused with the ways out.
TEST(CallgraphChoiceTest, StackCopyFitsTheRingBuffer) {
  uint32_t copy = kDefaultLeafStackSize;
  absl::StatusOr<std::string> note = FitStackCopyToRing(1, false, &copy);
  ASSERT_TRUE(note.ok());
  EXPECT_EQ(copy, 512u);
  EXPECT_NE(note->find("-mmap-pages 64 keeps the default"), std::string::npos) << *note;
  copy = kDefaultLeafStackSize;
  note = FitStackCopyToRing(256, false, &copy);
  EXPECT_EQ(*note, "");
  EXPECT_EQ(copy, kDefaultLeafStackSize);
  copy = 65528;
  absl::StatusOr<std::string> refused = FitStackCopyToRing(8, true, &copy);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("give -mmap-pages 128 or more"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(copy, 65528u);
  copy = 0;  // -callgraph fp copies nothing
  EXPECT_EQ(*FitStackCopyToRing(1, false, &copy), "");
}

}  // namespace
}  // namespace profcpu::collector
