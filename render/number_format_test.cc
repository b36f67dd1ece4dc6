#include "render/number_format.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

std::string Thousands(uint64_t value) {
  std::string out;
  AppendWithThousands(value, &out);
  return out;
}

std::string Fixed(double value, int decimals) {
  std::string out;
  AppendFixed(value, decimals, &out);
  return out;
}

std::string Shortest(double value) {
  std::string out;
  AppendShortest(value, &out);
  return out;
}

std::string Hundredths(int64_t value) {
  std::string out;
  AppendHundredths(value, &out);
  return out;
}

TEST(NumberFormatTest, ThousandsSeparatorsAsFlamegraphPl) {
  EXPECT_EQ(Thousands(0), "0");
  EXPECT_EQ(Thousands(7), "7");
  EXPECT_EQ(Thousands(999), "999");
  EXPECT_EQ(Thousands(1000), "1,000");
  EXPECT_EQ(Thousands(12345), "12,345");
  EXPECT_EQ(Thousands(123456), "123,456");
  EXPECT_EQ(Thousands(1234567), "1,234,567");
  EXPECT_EQ(Thousands(std::numeric_limits<uint64_t>::max()), "18,446,744,073,709,551,615");
}

TEST(NumberFormatTest, FixedRoundsLikePrintf) {
  // Perl's sprintf is C's printf: round to nearest on the exact binary value.
  for (double value : {0.0, 0.125, 0.135, 2.675, 47.0588235294, 99.995, 100.0, 1e-9, 33.333333}) {
    char expected[64];
    std::snprintf(expected, sizeof(expected), "%.2f", value);
    EXPECT_EQ(Fixed(value, 2), expected) << value;
  }
  EXPECT_EQ(Fixed(15.0, 1), "15.0");
}

TEST(NumberFormatTest, ShortestMatchesPerlInterpolation) {
  EXPECT_EQ(Shortest(69.0), "69");
  EXPECT_EQ(Shortest(79.5), "79.5");
  EXPECT_EQ(Shortest(0.59), "0.59");
  EXPECT_EQ(Shortest(1180), "1180");
}

TEST(NumberFormatTest, Hundredths) {
  EXPECT_EQ(Hundredths(0), "0.00");
  EXPECT_EQ(Hundredths(5), "0.05");
  EXPECT_EQ(Hundredths(130), "1.30");
  EXPECT_EQ(Hundredths(12345), "123.45");
  EXPECT_EQ(Hundredths(-5), "-0.05");
  EXPECT_EQ(Hundredths(std::numeric_limits<int64_t>::min()), "-92233720368547758.08");
}

}  // namespace
}  // namespace profcpu::render
