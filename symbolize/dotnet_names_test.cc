#include "symbolize/dotnet_names.h"

#include "gtest/gtest.h"

namespace profcpu::symbolize {
namespace {

TEST(DotnetNamesTest, StripsOnlyRuntimeTierNames) {
  EXPECT_EQ(StripTierSuffix("instance void [App] App::Run()[OptimizedTier1]"),
            "instance void [App] App::Run()");
  EXPECT_EQ(StripTierSuffix("int32 [App] C::F(int32)[QuickJitted]"), "int32 [App] C::F(int32)");
  EXPECT_EQ(StripTierSuffix("void [System.Private.CoreLib] X::Y()[PreJIT]"),
            "void [System.Private.CoreLib] X::Y()");
  EXPECT_EQ(StripTierSuffix("C::G()[OptimizedTier1OSR]"), "C::G()");
  EXPECT_EQ(StripTierSuffix("C::H()[InstrumentedTierOptimized]"), "C::H()");
  // Not tiers: arrays, generic-looking brackets, the assembly prefix.
  EXPECT_EQ(StripTierSuffix("int32[] [App] C::Arr()"), "int32[] [App] C::Arr()");
  EXPECT_EQ(StripTierSuffix("List[T]"), "List[T]");
  EXPECT_EQ(StripTierSuffix("[App]"), "[App]");
  EXPECT_EQ(StripTierSuffix(""), "");
  EXPECT_EQ(StripTierSuffix("stub<1> AllocateTemporaryEntryPoints<PreStubWorker>"),
            "stub<1> AllocateTemporaryEntryPoints<PreStubWorker>");
}

TEST(DotnetNamesTest, TierOfNamesTheAnnotation) {
  EXPECT_EQ(TierOf("M()[MinOptJitted]"), "MinOptJitted");
  EXPECT_EQ(TierOf("M()"), "");
  EXPECT_EQ(TierOf("M()[NotATier]"), "");
}

TEST(DotnetNamesTest, StripsJitFramesOnly) {
  SymbolTable table;
  table.Insert({CodeKind::kProcess, 1, 0x1000}, {"/tmp/perf-1.map", {{"M()[QuickJitted]", 0, false, "", 0}}});
  table.Insert({CodeKind::kNative, 0, 0x10}, {"/lib/x.so", {{"weird[Optimized]", 0, false, "", 0}}});
  EXPECT_EQ(StripTierSuffixes(&table), 1u);
  EXPECT_EQ(table.Find({CodeKind::kProcess, 1, 0x1000})->frames[0].function, "M()");
  EXPECT_EQ(table.Find({CodeKind::kNative, 0, 0x10})->frames[0].function, "weird[Optimized]");
}

}  // namespace
}  // namespace profcpu::symbolize
