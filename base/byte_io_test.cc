#include "base/byte_io.h"

#include <string>

#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

TEST(ByteIoTest, RoundTripsIntegersAndStrings) {
  std::string buffer;
  ByteWriter w(&buffer);
  w.U8(7);
  w.U16(0xBEEF);
  w.U32(0xDEADBEEF);
  w.U64(0x0123456789ABCDEFull);
  w.I64(-5);
  w.String("hello\0world");
  ByteReader r(buffer);
  EXPECT_EQ(r.U8(), 7);
  EXPECT_EQ(r.U16(), 0xBEEF);
  EXPECT_EQ(r.U32(), 0xDEADBEEFu);
  EXPECT_EQ(r.U64(), 0x0123456789ABCDEFull);
  EXPECT_EQ(r.I64(), -5);
  EXPECT_EQ(r.String(), "hello");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(ByteIoTest, ReadPastEndFailsAndStaysFailed) {
  std::string buffer = "abc";
  ByteReader r(buffer);
  EXPECT_EQ(r.U32(), 0u);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.U8(), 0);
  EXPECT_FALSE(r.ok());
}

TEST(ByteIoTest, StringLengthLargerThanInputFails) {
  std::string buffer;
  ByteWriter w(&buffer);
  w.U32(0xFFFFFFFF);  // claims 4 GiB
  buffer += "tiny";
  ByteReader r(buffer);
  EXPECT_EQ(r.String(), "");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace profcpu::base
