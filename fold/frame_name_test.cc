#include "fold/frame_name.h"

#include <string>

#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

TEST(FrameNameTest, StripSymbolOffsetDropsOnlyATrailingLowercaseHexOffset) {
  EXPECT_EQ(StripSymbolOffset("pv_native_safe_halt+0xb"), "pv_native_safe_halt");
  EXPECT_EQ(StripSymbolOffset("cpu_startup_entry+0x800047c022ec"), "cpu_startup_entry");
  EXPECT_EQ(StripSymbolOffset("a+0x1+0x2"), "a+0x1");
  EXPECT_EQ(StripSymbolOffset("+0x10"), "");
  EXPECT_EQ(StripSymbolOffset("foo+0x1B"), "foo+0x1B");  // the script wants [\da-f]
  EXPECT_EQ(StripSymbolOffset("foo+0x"), "foo+0x");
  EXPECT_EQ(StripSymbolOffset("foo+0x1 "), "foo+0x1 ");
  EXPECT_EQ(StripSymbolOffset("foo"), "foo");
}

TEST(FrameNameTest, ModuleKinds) {
  EXPECT_EQ(ModuleBasename("/usr/lib/libc.so.6"), "libc.so.6");
  EXPECT_EQ(ModuleBasename("[kernel.kallsyms]"), "[kernel.kallsyms]");
  EXPECT_EQ(ModuleBasename("/a/"), "");

  EXPECT_TRUE(IsKernelModule("[kernel.kallsyms]"));
  EXPECT_TRUE(IsKernelModule("[nf_conntrack_ipv4]"));
  EXPECT_TRUE(IsKernelModule("/lib/modules/4.3.0-rc1-virtual/build/vmlinux"));
  EXPECT_FALSE(IsKernelModule("[unknown]"));
  EXPECT_FALSE(IsKernelModule("/boot/vmlinux-6.1"));
  EXPECT_FALSE(IsKernelModule("/usr/lib/libc.so.6"));

  EXPECT_TRUE(IsJitModule("/tmp/perf-19982.map"));
  EXPECT_TRUE(IsJitModule("/proc/1/root/tmp/perf-7.mapped"));
  EXPECT_FALSE(IsJitModule("/tmp/perf-.map"));
  EXPECT_FALSE(IsJitModule("/tmp/perf-12xmap"));
  EXPECT_FALSE(IsJitModule("/tmp/jit-12.dump"));
}

TEST(FrameNameTest, GoMethodsKeepTheirParentheses) {
  EXPECT_TRUE(LooksLikeGoMethod("net/http.(*Client).Do"));
  EXPECT_TRUE(LooksLikeGoMethod(".()."));
  EXPECT_FALSE(LooksLikeGoMethod(".)."));
  EXPECT_FALSE(LooksLikeGoMethod("main.(*T)"));
}

std::string Tidy(absl::string_view name) {
  std::string out;
  AppendTidyName(name, &out);
  return out;
}

TEST(FrameNameTest, TidyName) {
  EXPECT_EQ(Tidy("v8::Function::Call(v8::Handle<v8::Value>, int)"), "v8::Function::Call");
  EXPECT_EQ(Tidy("ns::(anonymous namespace)::f(int)"), "ns::(anonymous namespace)::f");
  EXPECT_EQ(Tidy("(anonymous namespace)::(anonymous namespace)::g"),
            "(anonymous namespace)::(anonymous namespace)::g");
  EXPECT_EQ(Tidy("net/http.(*Client).Do(x)"), "net/http.(*Client).Do(x)");
  EXPECT_EQ(Tidy("Lorg/Foo;.call(Lorg/Bar;)V"), "Lorg/Foo:.call");
  EXPECT_EQ(Tidy("RegExp:[&<>\\\"\\']"), "RegExp:[&<>\\\\]");
  EXPECT_EQ(Tidy("a;b;c"), "a:b:c");
  EXPECT_EQ(Tidy("(x)"), "");
  EXPECT_EQ(Tidy("caf\xc3\xa9\xff"), "caf\xc3\xa9\xff");  // bytes pass through
}

TEST(FrameNameTest, RootName) {
  std::string out;
  AppendRootName("V8 WorkerThread", "24636", "25607", false, false, &out);
  EXPECT_EQ(out, "V8_WorkerThread");
  out.clear();
  AppendRootName("V8 WorkerThread", "24636", "25607", true, false, &out);
  EXPECT_EQ(out, "V8_WorkerThread-24636");
  out.clear();
  AppendRootName("a\tb;c", "?", "7", true, true, &out);
  EXPECT_EQ(out, "a\tb;c-?/7");  // only spaces change
  EXPECT_TRUE(IsJavaRoot("java-42"));
  EXPECT_FALSE(IsJavaRoot("jav"));
}

std::string Names(absl::string_view symbol, absl::string_view module, bool java = false,
                  FrameNameOptions options = {}, int* count = nullptr) {
  FrameNamer namer(options);
  std::string out;
  int n = namer.AppendNames("7f01", symbol, module, java, &out);
  if (count != nullptr) *count = n;
  return out;
}

TEST(FrameNameTest, UnknownSymbolsAreNamedByTheirModule) {
  EXPECT_EQ(Names("[unknown]", "/usr/lib/jvm/libjvm.so"), "[libjvm.so]");
  EXPECT_EQ(Names("[unknown]", "[unknown]"), "[unknown]");
  EXPECT_EQ(Names("[unknown]", "/x/a;b(c)"), "[a:b");  // then tidied like any name
  FrameNameOptions addrs;
  addrs.include_addrs = true;
  EXPECT_EQ(Names("[unknown]", "/usr/lib/jvm/libjvm.so", false, addrs), "[libjvm.so <7f01>]");
  EXPECT_EQ(Names("[unknown]", "[unknown]", false, addrs), "[unknown <7f01>]");
}

TEST(FrameNameTest, InlineChainsAndAnnotations) {
  int count = 0;
  EXPECT_EQ(Names("a->b->c_[i]+0x10", "/bin/x", false, {}, &count), "a;b_[i];c_[i]");
  EXPECT_EQ(count, 3);
  FrameNameOptions all;
  all.annotate_kernel = all.annotate_jit = true;
  EXPECT_EQ(Names("a->b", "[kernel.kallsyms]", false, all), "a_[k];b_[i]");
  EXPECT_EQ(Names("f", "/boot/build/vmlinux", false, all), "f_[k]");
  EXPECT_EQ(Names("f", "[unknown]", false, all), "f");
  EXPECT_EQ(Names("f", "/tmp/perf-42.map", false, all), "f_[j]");
  EXPECT_EQ(Names("f_[j]", "/tmp/perf-42.map", false, all), "f_[j]");
  EXPECT_EQ(Names("->a", "/tmp/perf-1.map", false, all), "_[j];a_[i]");
  EXPECT_EQ(Names("a->->b", "/bin/x"), "a;_[i];b_[i]");
}

TEST(FrameNameTest, PrecompiledDotnetCodeMarkedWhenAsked) {
  // CoreCLR's jitdump tags ReadyToRun code [PreJIT]; the tidying drops the
  // tag with the arguments, so profcpu's "_[p]" keeps it.
  const std::string prejit = "instance void [App] App::Run(int32)[PreJIT]+0x10";
  FrameNameOptions marks;
  marks.annotate_jit = marks.annotate_precompiled = true;
  EXPECT_EQ(Names(prejit, "/tmp/jit-42.dump", false, marks), "instance void [App] App::Run_[p]");
  EXPECT_EQ(Names(prejit, "/tmp/perf-42.map", false, marks), "instance void [App] App::Run_[p]");
  EXPECT_EQ(Names("App::Run(int32)[OptimizedTier1]", "/tmp/perf-42.map", false, marks),
            "App::Run_[j]");
  // Off by default, as in stackcollapse-perf.pl.
  FrameNameOptions jit;
  jit.annotate_jit = true;
  EXPECT_EQ(Names(prejit, "/tmp/perf-42.map", false, jit), "instance void [App] App::Run_[j]");
}

TEST(FrameNameTest, AnonymousNamespaceFramesKeptWhenAsked) {
  constexpr absl::string_view kHidden = "(anonymous namespace)::Spin(unsigned long)+0x3d";
  // stackcollapse-perf.pl skips every symbol starting with '(' (profcpu fold).
  EXPECT_EQ(Names(kHidden, "/usr/bin/app"), "");
  FrameNameOptions own;
  own.keep_anonymous_namespaces = true;
  EXPECT_EQ(Names(kHidden, "/usr/bin/app", false, own), "(anonymous namespace)::Spin");
  EXPECT_EQ(Names("(anonymous namespace)::Outer()->(anonymous namespace)::Inner()",
                  "/usr/bin/app", false, own),
            "(anonymous namespace)::Outer;(anonymous namespace)::Inner_[i]");
  // perf's "(process name)" lines are still skipped.
  EXPECT_EQ(Names("(cpu_shares)", "/usr/bin/app", false, own), "");
}

TEST(FrameNameTest, DotnetTiersKeptWhenAsked) {
  FrameNameOptions tiers;
  tiers.keep_dotnet_tiers = true;
  // On-stack replacement: the OSR body under its Tier0 caller is two frames,
  // not recursion.
  EXPECT_EQ(Names("Busy::Main(int64)[OptimizedTier1OSR]+0x2a", "/tmp/perf-42.map", false, tiers),
            "Busy::Main[OptimizedTier1OSR]");
  EXPECT_EQ(Names("Busy::Main(int64)[QuickJitted]", "/tmp/perf-42.map", false, tiers),
            "Busy::Main[QuickJitted]");
  EXPECT_EQ(Names("App.Calc::Sum[OptimizedTier1]", "/tmp/perf-42.map", false, tiers),
            "App.Calc::Sum[OptimizedTier1]");  // no argument list: the tier was never cut
  EXPECT_EQ(Names("Foo(List[T])", "/tmp/perf-42.map", false, tiers), "Foo");  // not a tier
  tiers.annotate_jit = tiers.annotate_precompiled = true;
  EXPECT_EQ(Names("App::Run(int32)[PreJIT]", "/tmp/jit-42.dump", false, tiers),
            "App::Run[PreJIT]_[p]");
  EXPECT_EQ(Names("App::Run(int32)[OptimizedTier1]", "/tmp/perf-42.map", false, tiers),
            "App::Run[OptimizedTier1]_[j]");
  // stackcollapse-perf.pl's tidying otherwise (profcpu fold).
  EXPECT_EQ(Names("Busy::Main(int64)[OptimizedTier1OSR]", "/tmp/perf-42.map"), "Busy::Main");
}

// profcpu's .NET names end with the assembly (symbolize/dotnet_assembly.h):
// the argument list is cut as ever, the tier kept when asked, and the
// assembly stays last; the ReadyToRun mark still sees [PreJIT].
TEST(FrameNameTest, DotnetAssemblyLastSurvivesTheTidying) {
  EXPECT_EQ(Names("System.Text.Json.Serialization.JsonConverter`1[System.__Canon]::WriteCore("
                  "class System.Text.Json.Utf8JsonWriter)[OptimizedTier1] [System.Text.Json]+0x2a",
                  "/tmp/perf-42.map"),
            "System.Text.Json.Serialization.JsonConverter`1[System.__Canon]::WriteCore "
            "[System.Text.Json]");
  FrameNameOptions tiers;
  tiers.keep_dotnet_tiers = tiers.annotate_jit = tiers.annotate_precompiled = true;
  EXPECT_EQ(Names("App.Calc::Sum(int32)[OptimizedTier1] [App]", "/tmp/perf-42.map", false, tiers),
            "App.Calc::Sum[OptimizedTier1] [App]_[j]");
  EXPECT_EQ(Names("App::Run(int32)[PreJIT] [App]", "/tmp/jit-42.dump", false, tiers),
            "App::Run[PreJIT] [App]_[p]");
  // GCC's clones are no assembly.
  EXPECT_EQ(Names("ns::f(int) [clone .cold]", "/usr/lib/x.so"), "ns::f");
}

TEST(FrameNameTest, SkippedSymbols) {
  int count = -1;
  EXPECT_EQ(Names("(deleted)", "/x", false, {}, &count), "");
  EXPECT_EQ(count, 0);
  EXPECT_EQ(Names("->->", "/x", false, {}, &count), "");
  EXPECT_EQ(count, 0);
  EXPECT_EQ(Names("+0x1f", "/x", false, {}, &count), "");
  EXPECT_EQ(count, 0);
}

TEST(FrameNameTest, JavaTidying) {
  EXPECT_EQ(Names("Lcom/foo/Bar;.baz(I)V", "/tmp/perf-1.map", true), "com/foo/Bar:.baz");
  EXPECT_EQ(Names("Lcom/foo/Bar;.baz(I)V", "/tmp/perf-1.map", false), "Lcom/foo/Bar:.baz");
  EXPECT_EQ(Names("Lfoo;.x(La/b;)V", "/tmp/perf-1.map", true), "Lfoo:.x");  // no '/' left
}

}  // namespace
}  // namespace profcpu::fold
