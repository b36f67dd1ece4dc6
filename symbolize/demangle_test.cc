#include "symbolize/demangle.h"

#include <string>

#include "gtest/gtest.h"

namespace profcpu::symbolize {
namespace {

TEST(DemangleTest, KeepsParametersAsPerfDoes) {
  EXPECT_EQ(Demangle("_ZN2ns3Foo3barEi"), "ns::Foo::bar(int)");
  EXPECT_EQ(Demangle("_ZN12_GLOBAL__N_112HiddenHelperEi"),
            "(anonymous namespace)::HiddenHelper(int)");
}

TEST(DemangleTest, LeavesCNamesAlone) {
  EXPECT_EQ(Demangle("main"), "main");
  // A bare type encoding demangles ("i" -> "int") but is no function name.
  EXPECT_EQ(Demangle("i"), "i");
  EXPECT_EQ(Demangle(""), "");
}

TEST(DemangleTest, KeepsSymbolVersionAfterTheName) {
  EXPECT_EQ(Demangle("_ZN2ns3Foo3barEv@@LIB_1.0"), "ns::Foo::bar()@@LIB_1.0");
}

TEST(DemangleTest, InvalidManglingIsReturnedUnchanged) {
  EXPECT_EQ(Demangle("_Z"), "_Z");
  EXPECT_EQ(Demangle("_ZN3foo"), "_ZN3foo");
}

TEST(DemangleTest, DeeplyNestedNamesDoNotExhaustTheStack) {
  // A hostile symbol table can nest types thousands deep; the demangler's
  // recursion limit (or our length cap) must turn that into "unchanged".
  std::string name = "_Z1f";
  for (int i = 0; i < 3000; ++i) name += "St6vectorI";
  name += "i";
  for (int i = 0; i < 3000; ++i) name += "E";
  EXPECT_EQ(Demangle(name), name);
}

TEST(DemangleTest, OverlongNamesAreNotDemangled) {
  std::string name = "_ZN";
  while (name.size() <= kMaxDemangleLength) name += "3foo";
  name += "Ev";
  EXPECT_EQ(Demangle(name), name);
}

}  // namespace
}  // namespace profcpu::symbolize
