#include "render/dotnet_label.h"

#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

TEST(DotnetLabelTest, TypeAndMethodOfADotnetFrame) {
  EXPECT_EQ(ShortDotnetLabel("System.Text.Json.Serialization.JsonConverter`1[System.__Canon]"
                             "::WriteCore[OptimizedTier1] [System.Text.Json]"),
            "JsonConverter`1::WriteCore");
  EXPECT_EQ(ShortDotnetLabel("App.Outer+Inner::Run [App]"), "Outer+Inner::Run");
  EXPECT_EQ(ShortDotnetLabel("Program::Main [App]"), "Program::Main");
  EXPECT_EQ(ShortDotnetLabel("System.Collections.Generic.Dictionary`2[System.String,"
                             "System.Int32]::FindValue [System.Private.CoreLib]"),
            "Dictionary`2::FindValue");
}

TEST(DotnetLabelTest, OtherNamesHaveNone) {
  EXPECT_EQ(ShortDotnetLabel("std::vector<int>::push_back"), "");
  EXPECT_EQ(ShortDotnetLabel("ns::f [clone .cold]"), "");
  EXPECT_EQ(ShortDotnetLabel("[libc.so.6]"), "");
  EXPECT_EQ(ShortDotnetLabel("[System.Text.Json] Old.Form::Method"), "");
}

}  // namespace
}  // namespace profcpu::render
