#include "symbolize/managed_code_events.h"

#include "gtest/gtest.h"

namespace profcpu::symbolize {
namespace {

using nettrace::MethodEvent;

MethodEvent Method(std::string type, std::string name, std::string signature, uint32_t tier) {
  MethodEvent e;
  e.method_namespace = std::move(type);
  e.name = std::move(name);
  e.signature = std::move(signature);
  e.flags = tier << 7 | 0x8;  // jitted
  return e;
}

TEST(PerfMapStyleNameTest, WritesTheNameAsThePerfMapDoes) {
  EXPECT_EQ(PerfMapStyleName(Method("PrimeWorker", "FindPrimeNumber", "int64  (int32)", 4),
                             "/app/PrimeApp.dll"),
            "[PrimeApp] PrimeWorker::FindPrimeNumber(int32)[OptimizedTier1]");
}

TEST(PerfMapStyleNameTest, PrecompiledCodeIsPreJit) {
  MethodEvent e = Method("System.Threading.Thread", "StartCallback", "instance void  ()", 2);
  e.flags &= ~0x8u;
  EXPECT_EQ(PerfMapStyleName(e, "/usr/share/dotnet/System.Private.CoreLib.dll"),
            "[System.Private.CoreLib] System.Threading.Thread::StartCallback()[PreJIT]");
  e.flags |= 0x8;
  EXPECT_EQ(PerfMapStyleName(e, "/usr/share/dotnet/System.Private.CoreLib.dll"),
            "[System.Private.CoreLib] System.Threading.Thread::StartCallback()[Optimized]");
}

TEST(PerfMapStyleNameTest, ArgumentsUseThePerfMapKeywords) {
  MethodEvent e = Method("X", "Run",
                         "instance generic void  (class System.String[],class System.Object,value "
                         "class System.DateTime,class System.ObjectModel.Thing,class "
                         "System.Func`1<class System.String>)",
                         3);
  EXPECT_EQ(PerfMapStyleName(e, "C:\\app\\App.exe"),
            "[App] X::Run(string[],object,valuetype System.DateTime,class "
            "System.ObjectModel.Thing,class System.Func`1<string>)[QuickJitted]");
  // No signature, no module: still a name.
  EXPECT_EQ(PerfMapStyleName(Method("T", "M", "", 0), ""), "[] T::M()[Unknown]");
}

}  // namespace
}  // namespace profcpu::symbolize
