#include "symbolize/perfinfo_map.h"

#include "gtest/gtest.h"

namespace profcpu::symbolize {
namespace {

TEST(PerfInfoMapTest, ReadsImageLoadsAsCoreClrWritesThem) {
  PerfInfoMap map = PerfInfoMap::Parse(
      "ImageLoad;/usr/share/dotnet/shared/Microsoft.NETCore.App/7.0.0/System.Private.CoreLib.dll;"
      "{8f1d2c3a-1111-2222-3333-444455556666};0x7f1234500000;\n"
      "ImageLoad;/app/App.dll;{aaaaaaaa-0000-0000-0000-000000000000};(nil);\n"
      "ImageLoad;/app/Lib.dll;{bbbbbbbb-0000-0000-0000-000000000000};7F9900000000;\r\n"
      "RuntimeVersion;7.0.0\n"
      "ImageLoad;only-two-fields\n"
      "ImageLoad;/app/Bad.dll;{x};0xZZZ;\n");
  ASSERT_EQ(map.images.size(), 3u);
  EXPECT_EQ(map.images[0].base, 0x7f1234500000u);
  EXPECT_EQ(map.images[1].base, 0u);
  EXPECT_EQ(map.images[2].path, "/app/Lib.dll");
  EXPECT_EQ(map.images[2].base, 0x7f9900000000u);
  EXPECT_EQ(map.other_events, 1u);
  EXPECT_EQ(map.malformed, 2u);
  EXPECT_EQ(map.lines, 6u);

  ASSERT_NE(map.ImageAt(0x7f1234500100), nullptr);
  EXPECT_EQ(map.ImageAt(0x7f1234500100)->guid, "{8f1d2c3a-1111-2222-3333-444455556666}");
  EXPECT_EQ(map.ImageAt(0x7f9900000010)->path, "/app/Lib.dll");
  EXPECT_EQ(map.ImageAt(0x1000), nullptr);  // below every precompiled image
  EXPECT_NE(map.ImageFor("/app/App.dll"), nullptr);
  EXPECT_EQ(map.ImageFor("/app/None.dll"), nullptr);
}

TEST(PerfInfoMapTest, OverlongLinesAreMalformed) {
  PerfInfoMap map = PerfInfoMap::Parse("ImageLoad;/" + std::string(10000, 'a') + ";g;0x1;\n");
  EXPECT_TRUE(map.images.empty());
  EXPECT_EQ(map.malformed, 1u);
}

}  // namespace
}  // namespace profcpu::symbolize
