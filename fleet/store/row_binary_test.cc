#include "fleet/store/row_binary.h"

#include <string>

#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

TEST(RowBinaryTest, StringIsVarintLengthThenBytes) {
  std::string out;
  AppendString(&out, "abc");
  EXPECT_EQ(out, std::string("\x03" "abc", 4));
  out.clear();
  AppendString(&out, std::string(300, 'x'));  // 300 = 0b10'0101100: two varint bytes
  ASSERT_EQ(out.size(), 302u);
  EXPECT_EQ(static_cast<unsigned char>(out[0]), 0xac);
  EXPECT_EQ(static_cast<unsigned char>(out[1]), 0x02);
  out.clear();
  AppendString(&out, "");
  EXPECT_EQ(out, std::string("\0", 1));
}

TEST(RowBinaryTest, IntegersAreLittleEndian) {
  std::string out;
  AppendUInt64(&out, 0x0102030405060708ull);
  AppendUInt32(&out, 1700000000u);  // a DateTime
  EXPECT_EQ(out, std::string("\x08\x07\x06\x05\x04\x03\x02\x01"
                             "\x00\xf1\x53\x65",
                             12));
}

TEST(RowBinaryTest, ArrayIsCountThenElements) {
  std::string out;
  AppendUInt64Array(&out, {1, 2});
  EXPECT_EQ(out, std::string("\x02" "\x01\0\0\0\0\0\0\0" "\x02\0\0\0\0\0\0\0", 17));
  out.clear();
  AppendUInt64Array(&out, {});
  EXPECT_EQ(out, std::string("\0", 1));
}

}  // namespace
}  // namespace profcpu::fleet
