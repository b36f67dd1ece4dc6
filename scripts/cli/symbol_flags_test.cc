#include "scripts/cli/symbol_flags.h"

#include "gtest/gtest.h"

namespace profcpu::cli {
namespace {

TEST(SymbolFlagsTest, CallgraphValues) {
  EXPECT_EQ(*ParseCallgraph("fp"), 0u);
  EXPECT_EQ(*ParseCallgraph("dwarf"), 8192u);
  EXPECT_EQ(*ParseCallgraph("dwarf,16384"), 16384u);
  EXPECT_EQ(*ParseCallgraph("dwarf,65528"), 65528u);
  for (const char* bad : {"", "lbr", "dwarf,", "dwarf,0", "dwarf,12", "dwarf,65536", "dwarf,-8",
                          "dwarf,8x", "DWARF"}) {
    EXPECT_FALSE(ParseCallgraph(bad).ok()) << bad;
  }
}

TEST(SymbolFlagsTest, SymbolDirsRepeatAndTiersStrip) {
  FlagSet flags("postprocess", "", "");
  AddSymbolFlags(&flags);
  AddCallgraphFlag(&flags);
  ASSERT_TRUE(flags.Parse({"-symbols", "/a", "--symbols=/b", "-strip-tiers", "-callgraph",
                           "dwarf,4096"})
                  .ok());
  PipelineOptions pipeline;
  ReadSymbolFlags(flags, &pipeline);
  EXPECT_EQ(pipeline.symbol_dirs, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(pipeline.strip_tiers);
  collector::SamplerOptions sampler;
  ASSERT_TRUE(ReadCallgraphFlag(flags, &sampler).ok());
  EXPECT_EQ(sampler.dwarf_stack_size, 4096u);
}

}  // namespace
}  // namespace profcpu::cli
