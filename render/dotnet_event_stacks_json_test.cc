#include "render/dotnet_event_stacks_json.h"

#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

TEST(DotnetEventStacksJsonTest, EachProfileWithItsFileUnitAndWhatItMissed) {
  fold::DotnetEventProfiles profiles;
  fold::DotnetEventProfile& alloc = profiles.profiles.emplace_back();
  alloc.kind = fold::DotnetEventKind::kAlloc;
  alloc.events = 40;
  alloc.weight = 4'000'000;
  alloc.no_stack = 1;
  alloc.dropped = 7;
  fold::DotnetEventProfile& waits = profiles.profiles.emplace_back();
  waits.kind = fold::DotnetEventKind::kLockWait;
  waits.unpaired = 2;  // no sample: no file written
  const nlohmann::ordered_json j = DotnetEventStacksJson(profiles);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["kind"], "alloc");
  EXPECT_EQ(j[0]["file"], "alloc_stacks.out");
  EXPECT_EQ(j[0]["unit"], "bytes");
  EXPECT_EQ(j[0]["events"], 40);
  EXPECT_EQ(j[0]["weight"], 4'000'000);
  EXPECT_EQ(j[0]["no_stack"], 1);
  EXPECT_EQ(j[0]["dropped"], 7);
  EXPECT_EQ(j[1]["kind"], "lock_wait");
  EXPECT_EQ(j[1]["file"], "");
  EXPECT_EQ(j[1]["unit"], "microseconds");
  EXPECT_EQ(j[1]["unpaired"], 2);
}

TEST(DotnetEventStacksJsonTest, NoNettraceNoEntries) {
  EXPECT_TRUE(DotnetEventStacksJson(fold::DotnetEventProfiles()).empty());
}

}  // namespace
}  // namespace profcpu::render
