#include "fleet/store/tsv_answer.h"

#include <string>

#include "fleet/store/testing_http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TsvAnswerTest, ReadsRowsAndFields) {
  absl::StatusOr<std::vector<TsvRow>> rows = ParseTsvAnswer("a\t1\nb\t22\n");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_THAT((*rows)[0], ElementsAre("a", "1"));
  EXPECT_THAT((*rows)[1], ElementsAre("b", "22"));
}

TEST(TsvAnswerTest, EmptyAnswerIsNoRowsAndEmptyFieldsCount) {
  absl::StatusOr<std::vector<TsvRow>> none = ParseTsvAnswer("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  absl::StatusOr<std::vector<TsvRow>> blanks = ParseTsvAnswer("\t\n\n", {});
  EXPECT_FALSE(blanks.ok());  // 2 fields, then 1
  absl::StatusOr<std::vector<TsvRow>> one = ParseTsvAnswer("\n");
  ASSERT_TRUE(one.ok());
  EXPECT_THAT(*one, ElementsAre(ElementsAre("")));
}

TEST(TsvAnswerTest, UnescapesWhatClickHouseEscapes) {
  absl::StatusOr<std::vector<TsvRow>> rows =
      ParseTsvAnswer("a\\tb\\nc\\\\d\\'e\\0f\\x41\\r\n");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0][0], std::string("a\tb\nc\\d'e\0fA\r", 13));
}

TEST(TsvAnswerTest, ErrorsSayWhichRowAndWhy) {
  absl::StatusOr<std::vector<TsvRow>> cut = ParseTsvAnswer("a\t1\nb\t2");
  EXPECT_THAT(testing::MessageOf(cut.status()), HasSubstr("row 2: answer ends without a newline"));
  absl::StatusOr<std::vector<TsvRow>> ragged = ParseTsvAnswer("a\t1\nb\n");
  EXPECT_THAT(testing::MessageOf(ragged.status()), HasSubstr("row 2: 1 fields, expected 2"));
  TsvLimits three;
  three.fields = 3;
  EXPECT_THAT(testing::MessageOf(ParseTsvAnswer("a\t1\n", three).status()),
              HasSubstr("row 1: 2 fields, expected 3"));
  EXPECT_THAT(testing::MessageOf(ParseTsvAnswer("a\\x4").status()), HasSubstr("bad escape"));
  EXPECT_THAT(testing::MessageOf(ParseTsvAnswer("a\\").status()), HasSubstr("ends inside an escape"));
  EXPECT_THAT(testing::MessageOf(ParseTsvAnswer("a\\\tb\n").status()),
              HasSubstr("backslash before a separator"));
}

TEST(TsvAnswerTest, BoundsAreErrorsNotMemory) {
  TsvLimits small;
  small.max_rows = 2;
  small.max_fields = 3;
  small.max_field_bytes = 4;
  small.max_cells = 5;
  EXPECT_EQ(ParseTsvAnswer("1\n2\n3\n", small).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(testing::MessageOf(ParseTsvAnswer("1\t2\t3\t4\n", small).status()),
              HasSubstr("more than 3 fields"));
  EXPECT_THAT(testing::MessageOf(ParseTsvAnswer("12345\n", small).status()),
              HasSubstr("longer than 4 bytes"));
  EXPECT_THAT(testing::MessageOf(ParseTsvAnswer("1\t2\t3\n4\t5\t6\n", small).status()),
              HasSubstr("more than 5 fields in all"));
  EXPECT_TRUE(ParseTsvAnswer("1234\t\t\n5\t6\n", small).ok() == false);  // ragged
  EXPECT_TRUE(ParseTsvAnswer("1234\t\t\n", small).ok());
}

TEST(TsvAnswerTest, UInt64Fields) {
  EXPECT_EQ(*ParseUInt64Field("0"), 0u);
  EXPECT_EQ(*ParseUInt64Field("18446744073709551615"), 18446744073709551615ull);
  EXPECT_FALSE(ParseUInt64Field("18446744073709551616").ok());
  EXPECT_FALSE(ParseUInt64Field("").ok());
  EXPECT_FALSE(ParseUInt64Field("-1").ok());
  EXPECT_FALSE(ParseUInt64Field(" 1").ok());
  EXPECT_FALSE(ParseUInt64Field("+1").ok());
  EXPECT_THAT(testing::MessageOf(ParseUInt64Field(std::string(100, 'x')).status()), HasSubstr("...'"));
}

}  // namespace
}  // namespace profcpu::fleet
