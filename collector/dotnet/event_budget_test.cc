#include "collector/dotnet/event_budget.h"

#include <cstdint>

#include "gtest/gtest.h"
#include "nettrace/runtime_events.h"

namespace profcpu::collector::dotnet {
namespace {

constexpr absl::string_view kRuntime = nettrace::kDotNetRuntimeProvider;
constexpr absl::string_view kRundown = nettrace::kDotNetRundownProvider;
constexpr uint64_t kCap = 256ull << 20;
constexpr uint64_t kSecond = 1'000'000'000;

TEST(EventBudgetTest, TiersFollowWhatTheOutputsUse) {
  EXPECT_EQ(TierOf(kRuntime, 143), EventTier::kNaming);  // MethodLoadVerbose
  EXPECT_EQ(TierOf(kRuntime, 1), EventTier::kNaming);    // GCStart
  EXPECT_EQ(TierOf(kRundown, 144), EventTier::kNaming);  // MethodDCEndVerbose
  EXPECT_EQ(TierOf(kRuntime, 80), EventTier::kCounted);  // ExceptionThrown
  EXPECT_EQ(TierOf(kRuntime, 81), EventTier::kCounted);  // ContentionStart
  EXPECT_EQ(TierOf(kRuntime, 10), EventTier::kBulk);     // GCAllocationTick
  EXPECT_EQ(TierOf("Other", 1), EventTier::kBulk);
  EXPECT_EQ(EventKindName(kRuntime, 10), "GCAllocationTick");
  EXPECT_EQ(EventKindName(kRuntime, 9999), "DotNETRuntime/9999");
}

TEST(EventBudgetTest, AQuietAppKeepsEverything) {
  EventBudget budget(kCap);
  // 10 KB/s for an hour: far below the rate.
  for (uint64_t t = 1; t <= 3600 * 100; ++t) {
    EXPECT_TRUE(budget.Keep(kRuntime, 10, 100, t * kSecond / 100));
  }
  EXPECT_TRUE(budget.Dropped().empty());
}

// The service of issue 26: 27 MB per 30 s, GCAllocationTick 60% of it, the
// rest method loads, GCs, exceptions and contention; a 30-minute collection
// without -duration must stay within the cap with the rundown after it.
TEST(EventBudgetTest, ABusyServiceFor30MinutesStaysWithinTheCapAndKeepsItsNames) {
  EventBudget budget(kCap);
  const uint64_t start = 1000 * kSecond;
  uint64_t naming_offered = 0, naming_kept = 0, counted_kept = 0, ticks_kept = 0;
  // Per 10 ms: 5.4 KB of allocation ticks (54 of 100 B), 1.8 KB of
  // exceptions and contention (18 of 100 B), 1.5 KB of other bulk events
  // (thread-pool waits, catch/finally) and one 300 B naming event (a GC's or
  // a method load's): 900 KB/s.
  for (uint64_t step = 0; step < 30 * 60 * 100; ++step) {
    const uint64_t t = start + step * kSecond / 100;
    for (int i = 0; i < 54; ++i) ticks_kept += budget.Keep(kRuntime, 10, 100, t);
    for (int i = 0; i < 9; ++i) counted_kept += budget.Keep(kRuntime, 80, 100, t);
    for (int i = 0; i < 9; ++i) counted_kept += budget.Keep(kRuntime, 81, 100, t);
    for (int i = 0; i < 15; ++i) budget.Keep(kRuntime, 57, 100, t);
    ++naming_offered;
    naming_kept += budget.Keep(kRuntime, 143, 300, t);
  }
  EXPECT_EQ(naming_kept, naming_offered) << "names are never thinned below the cap";
  EXPECT_GT(ticks_kept, 0u) << "thinned, not switched off";
  EXPECT_GT(counted_kept, ticks_kept) << "counted events outlast bulk ones";
  EXPECT_LE(budget.kept_bytes(), kCap - kCap / 8);
  // The rundown at the end fits in the reserve.
  budget.StartRundown();
  const uint64_t end = start + 30 * 60 * kSecond;
  for (int i = 0; i < 100'000; ++i) EXPECT_TRUE(budget.Keep(kRundown, 144, 200, end));
  EXPECT_LE(budget.kept_bytes(), kCap);

  const auto dropped = budget.Dropped();
  ASSERT_FALSE(dropped.empty());
  EXPECT_EQ(dropped[0].kind, "GCAllocationTick");
  // Cut within seconds of the start (the burst bank drains), said by time.
  EXPECT_GT(dropped[0].first_ns, start);
  EXPECT_LT(dropped[0].first_ns, start + 60 * kSecond);
  for (const auto& d : dropped) EXPECT_NE(d.kind, "MethodLoadVerbose");
}

TEST(EventBudgetTest, ACollectionWithADurationSpreadsTheCapOverIt) {
  // -duration 30: the same 900 KB/s is far below cap/30 s; nothing dropped.
  EventBudget budget(kCap, 30);
  for (uint64_t step = 0; step < 30 * 100; ++step) {
    for (int i = 0; i < 90; ++i) EXPECT_TRUE(budget.Keep(kRuntime, 10, 100, step * kSecond / 100 + 1));
  }
  EXPECT_TRUE(budget.Dropped().empty());
}

// Stack blocks pass whole: they fill the file as events do, so the events
// kept make room for them.
TEST(EventBudgetTest, BlocksKeptWholeCountAgainstTheCap) {
  EventBudget budget(8000, 1);  // reserve 1000 B
  budget.Charge(3000);
  int kept = 0;
  for (int i = 0; i < 100; ++i) kept += budget.Keep(kRuntime, 143, 100, kSecond);
  EXPECT_EQ(kept, 40);
  EXPECT_EQ(budget.kept_bytes(), 7000u);
}

TEST(EventBudgetTest, PastTheCapEverythingIsCutAndSaidAsAll) {
  EventBudget budget(8000, 1);  // reserve 1000 B
  uint64_t t = kSecond;
  // Naming events only: kept up to the cap less the reserve.
  int kept = 0;
  for (int i = 0; i < 100; ++i) kept += budget.Keep(kRuntime, 143, 100, t);
  EXPECT_EQ(kept, 70);
  const auto dropped = budget.Dropped();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].kind, "all");
  EXPECT_EQ(dropped[0].count, 30u);
  EXPECT_EQ(dropped[0].bytes, 3000u);
  EXPECT_EQ(dropped[0].first_ns, t);
  budget.StartRundown();
  kept = 0;
  for (int i = 0; i < 100; ++i) kept += budget.Keep(kRundown, 144, 100, t);
  EXPECT_EQ(kept, 10);
}

}  // namespace
}  // namespace profcpu::collector::dotnet
