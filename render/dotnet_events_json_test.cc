#include "render/dotnet_events_json.h"

#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

TEST(DotnetEventsJsonTest, OneProcesssRuntimeAsMetadataShowsIt) {
  fold::DotnetEventsSummary s;
  s.pid = 42;
  s.gc.count = 3;
  s.gc.by_generation[0] = 2;
  s.gc.by_generation[2] = 1;
  s.gc.by_reason["AllocSmall"] = 3;
  s.exceptions.count = 5;
  s.exceptions.by_type["System.InvalidOperationException"] = 5;
  const nlohmann::ordered_json j = DotnetEventsJson(s);
  EXPECT_EQ(j["pid"], 42);
  EXPECT_EQ(j["gc"]["count"], 3);
  EXPECT_EQ(j["gc"]["by_generation"]["2"], 1);
  EXPECT_EQ(j["gc"]["by_reason"]["AllocSmall"], 3);
  EXPECT_EQ(j["exceptions"]["by_type"]["System.InvalidOperationException"], 5);
  EXPECT_FALSE(j.contains("read_error"));
}

TEST(DotnetEventsJsonTest, ADamagedStreamSaysWhy) {
  fold::DotnetEventsSummary s;
  s.read_error = absl::DataLossError("block at offset 4096 runs past the end");
  EXPECT_EQ(DotnetEventsJson(s)["read_error"], "block at offset 4096 runs past the end");
}

}  // namespace
}  // namespace profcpu::render
