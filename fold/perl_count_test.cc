#include "fold/perl_count.h"

#include <string>

#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

std::string Print(const PerlCount& count) {
  std::string out;
  count.AppendTo(&out);
  return out;
}

TEST(PerlCountTest, IntegersWhileTheSumFits) {
  PerlCount count;
  EXPECT_EQ(Print(count), "0");
  count.AddDigits("0000000000000000000000000000042");  // leading zeros do not overflow
  count.Add(18446744073709551573u);
  EXPECT_FALSE(count.is_double());
  EXPECT_EQ(Print(count), "18446744073709551615");
}

TEST(PerlCountTest, DoublesOnceItDoesNot) {
  PerlCount count;
  count.AddDigits("18446744073709551615");
  count.AddDigits("1");
  EXPECT_TRUE(count.is_double());
  EXPECT_EQ(Print(count), "1.84467440737096e+19");
  count.Add(1);
  EXPECT_EQ(Print(count), "1.84467440737096e+19");

  PerlCount big;
  big.AddDigits("100000000000000000000");
  EXPECT_EQ(Print(big), "1e+20");

  PerlCount huge;
  huge.AddDigits(std::string(400, '9'));
  EXPECT_EQ(Print(huge), "Inf");
}

}  // namespace
}  // namespace profcpu::fold
