#include "base/utf16.h"

#include <string>

#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

TEST(Utf16LeToUtf8Test, Utf16WithSurrogates) {
  std::string pair("\x3d\xd8\x00\xde", 4);  // U+1F600
  EXPECT_EQ(Utf16LeToUtf8(pair), "\xf0\x9f\x98\x80");
  std::string lone("\x00\xd8", 2);
  EXPECT_EQ(Utf16LeToUtf8(lone), "\xef\xbf\xbd");
}

}  // namespace
}  // namespace profcpu::base
