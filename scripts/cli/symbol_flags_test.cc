#include "scripts/cli/symbol_flags.h"

#include <stdlib.h>

#include "gtest/gtest.h"

namespace profcpu::cli {
namespace {

TEST(SymbolFlagsTest, SymbolDirsRepeatAndTiersStrip) {
  ::unsetenv("DEBUGINFOD_URLS");
  FlagSet flags("postprocess", "", "");
  AddSymbolFlags(&flags);
  AddSymbolServerFlags(&flags, /*collecting=*/false);
  AddCallgraphFlag(&flags);
  ASSERT_TRUE(flags.Parse({"-symbols", "/a", "--symbols=/b", "-strip-tiers", "-callgraph",
                           "dwarf,4096", "-symbol-cache", "/nonexistent/cache"})
                  .ok());
  PipelineOptions pipeline;
  ASSERT_TRUE(ReadSymbolFlags(flags, /*collecting=*/false, &pipeline).ok());
  // A cache that does not exist is not searched; no server: nothing to fetch.
  EXPECT_EQ(pipeline.symbol_dirs, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_FALSE(pipeline.fetch.has_value());
  EXPECT_TRUE(pipeline.strip_tiers);
  collector::SamplerOptions sampler;
  ASSERT_TRUE(ReadCallgraphFlag(flags, &sampler).ok());
  EXPECT_EQ(sampler.dwarf_stack_size, 4096u);
}

TEST(SymbolFlagsTest, SymbolServersAndTheirLimits) {
  FlagSet flags("postprocess", "", "");
  AddSymbolServerFlags(&flags, /*collecting=*/false);
  ASSERT_TRUE(flags.Parse({"-symbol-server", "msdl", "-symbol-server", "http://127.0.0.1:8/s/",
                           "-symbol-cache", "/c", "-symbol-timeout", "3", "-symbol-max-mb", "16"})
                  .ok());
  absl::StatusOr<symbolize::SymbolFetchOptions> fetch = ReadSymbolFetchOptions(flags);
  ASSERT_TRUE(fetch.ok()) << fetch.status();
  EXPECT_EQ(fetch->servers, (std::vector<std::string>{
                                "https://msdl.microsoft.com/download/symbols",
                                "http://127.0.0.1:8/s"}));
  EXPECT_EQ(fetch->cache_dir, "/c");
  EXPECT_EQ(fetch->limits.timeout, absl::Seconds(3));
  EXPECT_EQ(fetch->limits.max_bytes, uint64_t{16} << 20);

  FlagSet bad("postprocess", "", "");
  AddSymbolServerFlags(&bad, /*collecting=*/false);
  ASSERT_TRUE(bad.Parse({"-symbol-server", "ftp://x"}).ok());
  EXPECT_FALSE(ReadSymbolFetchOptions(bad).ok());
}

TEST(SymbolFlagsTest, FetchSymbolsNeedsAServer) {
  ::unsetenv("DEBUGINFOD_URLS");  // no debuginfod server either
  FlagSet flags("record", "", "");
  AddSymbolFlags(&flags);
  AddSymbolServerFlags(&flags, /*collecting=*/true);
  ASSERT_TRUE(flags.Parse({"-fetch-symbols", "-symbol-cache", "/c"}).ok());
  PipelineOptions pipeline;
  EXPECT_FALSE(ReadSymbolFlags(flags, /*collecting=*/true, &pipeline).ok());
}

}  // namespace
}  // namespace profcpu::cli
