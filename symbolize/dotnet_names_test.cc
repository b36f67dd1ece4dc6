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

TEST(DotnetNamesTest, WithoutReturnTypeStartsAtTheModule) {
  EXPECT_EQ(WithoutReturnType("int64 [PrimeApp] PrimeWorker::FindPrimeNumber(int32)[QuickJitted]"),
            "[PrimeApp] PrimeWorker::FindPrimeNumber(int32)[QuickJitted]");
  EXPECT_EQ(WithoutReturnType("instance class [System.Runtime]System.Threading.Tasks.Task`1<string> "
                              "[System.Net.Http] System.Net.Http.HttpClient::Get(class "
                              "[System.Runtime]System.Uri)[PreJIT]"),
            "[System.Net.Http] System.Net.Http.HttpClient::Get(class "
            "[System.Runtime]System.Uri)[PreJIT]");
  EXPECT_EQ(WithoutReturnType("int32[] [App] App.Calc`1[int32]::Sum(int32[])[OptimizedTier1]"),
            "[App] App.Calc`1[int32]::Sum(int32[])[OptimizedTier1]");
  EXPECT_EQ(WithoutReturnType("System.Threading.Tasks.Task /* MT: 0x7f2b */ [Anonymously Hosted "
                              "DynamicMethods Assembly] dynamicClass::lambda_method1(object)"),
            "[Anonymously Hosted DynamicMethods Assembly] dynamicClass::lambda_method1(object)");
  // Already without, or not .NET at all: unchanged.
  EXPECT_EQ(WithoutReturnType("[App] App::Run()[QuickJitted]"), "[App] App::Run()[QuickJitted]");
  EXPECT_EQ(WithoutReturnType("LazyCompile:*fib /app/fib.js:3"), "LazyCompile:*fib /app/fib.js:3");
  EXPECT_EQ(WithoutReturnType("Builtin: [x] y"), "Builtin: [x] y");
  EXPECT_EQ(WithoutReturnType("void [App] NoColons(int32)"), "void [App] NoColons(int32)");
}

TEST(DotnetNamesTest, ReadableNamesPutTheMethodFirstAndDropMethodTables) {
  EXPECT_EQ(ReadableDotnetName("[System.Text.Json] System.Text.Json.Serialization.JsonConverter`1"
                               "[System.__Canon]::WriteCore(class System.Text.Json.Utf8JsonWriter)"
                               "[OptimizedTier1]"),
            "System.Text.Json.Serialization.JsonConverter`1[System.__Canon]::WriteCore(class "
            "System.Text.Json.Utf8JsonWriter)[OptimizedTier1] [System.Text.Json]");
  EXPECT_EQ(ReadableDotnetName("[System.Private.CoreLib] dynamicClass::InvokeStub_X.set_Level("
                               "object,System.Span`1 /* MT: 0x7fb3a0d1fe30 */<object>)[Optimized]"),
            "dynamicClass::InvokeStub_X.set_Level(object,System.Span`1<object>)[Optimized] "
            "[System.Private.CoreLib]");
  EXPECT_EQ(ReadableDotnetName("[Anonymously Hosted DynamicMethods Assembly] "
                               "dynamicClass::lambda_method1(object)"),
            "dynamicClass::lambda_method1(object) [Anonymously Hosted DynamicMethods Assembly]");
  // Not .NET, or not in the runtime's form: unchanged.
  EXPECT_EQ(ReadableDotnetName("LazyCompile:*fib /app/fib.js:3"), "LazyCompile:*fib /app/fib.js:3");
  EXPECT_EQ(ReadableDotnetName("[unknown]"), "[unknown]");
  EXPECT_EQ(ReadableDotnetName("[App] NoColons(int32)"), "[App] NoColons(int32)");
  EXPECT_EQ(ReadableDotnetName("stub<1> AllocateTemporaryEntryPoints<PreStubWorker>"),
            "stub<1> AllocateTemporaryEntryPoints<PreStubWorker>");
}

TEST(DotnetNamesTest, ReadableNamesOnlyForJitFrames) {
  SymbolTable table;
  table.Insert({CodeKind::kProcess, 1, 0x1000}, {"/tmp/perf-1.map", {{"[App] A::M()[QuickJitted]", 0, false, "", 0}}});
  table.Insert({CodeKind::kNative, 0, 0x10}, {"/lib/x.so", {{"[x] a::b()", 0, false, "", 0}}});
  EXPECT_EQ(MakeDotnetNamesReadable(&table), 1u);
  EXPECT_EQ(table.Find({CodeKind::kProcess, 1, 0x1000})->frames[0].function,
            "A::M()[QuickJitted] [App]");
  EXPECT_EQ(table.Find({CodeKind::kNative, 0, 0x10})->frames[0].function, "[x] a::b()");
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
