#include "fleet/query/label_filter.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::HasSubstr;

TEST(LabelFilter, EmptyKeepsEverything) {
  LabelFilter filter = *ParseLabelFilter("  ");
  EXPECT_TRUE(filter.matchers.empty());
  EXPECT_EQ(filter.Sql(), "1");
}

TEST(LabelFilter, AllFourOperators) {
  LabelFilter filter = *ParseLabelFilter("namespace=shop,pod=~api-.*,comm!=bash,exe!~.*python.*");
  ASSERT_EQ(filter.matchers.size(), 4u);
  EXPECT_EQ(filter.Sql(),
            "namespace = 'shop' AND match(pod, '^(?:api-.*)$') AND comm != 'bash' AND "
            "NOT match(exe, '^(?:.*python.*)$')");
  EXPECT_EQ(filter.Text(), "namespace=shop,pod=~api-.*,comm!=bash,exe!~.*python.*");
}

TEST(LabelFilter, CommasInsideValuesStay) {
  LabelFilter filter = *ParseLabelFilter("pod=~api-[0-9]{1,3},namespace=a,b");
  ASSERT_EQ(filter.matchers.size(), 2u);
  EXPECT_EQ(filter.matchers[0].value, "api-[0-9]{1,3}");
  EXPECT_EQ(filter.matchers[1].value, "a,b");
}

TEST(LabelFilter, EmptyValueMatchesEmptyLabel) {
  LabelFilter filter = *ParseLabelFilter("pod=");
  EXPECT_EQ(filter.Sql(), "pod = ''");
}

TEST(LabelFilter, OnlyStoreKeys) {
  for (const char* bad : {"time=1", "stack_id=1", "pod", "pod~x", "1=1", "pod = x",
                          "count=1 OR 1=1", "=x"}) {
    EXPECT_FALSE(ParseLabelFilter(bad).ok()) << bad;
  }
  EXPECT_THAT(ParseLabelFilter("Pod=x").status().message(), HasSubstr("namespace"));
}

// Whatever the value, it stays inside one literal: the SQL has exactly the
// matcher's structure and the literal unescapes back to the value.
TEST(LabelFilter, InjectionStaysInTheLiteral) {
  EXPECT_EQ(ParseLabelFilter("pod=x' OR 1=1 --")->Sql(), "pod = 'x\\' OR 1=1 --'");
  EXPECT_EQ(ParseLabelFilter("pod=x\\' OR '1'='1")->Sql(), "pod = 'x\\\\\\' OR \\'1\\'=\\'1'");
  EXPECT_EQ(ParseLabelFilter("pod=a\\")->Sql(), "pod = 'a\\\\'");
  EXPECT_EQ(ParseLabelFilter("pod=~a\\.b')) FORMAT TSV; DROP TABLE x; --")->Sql(),
            "match(pod, '^(?:a\\\\.b\\')) FORMAT TSV; DROP TABLE x; --)$')");
  EXPECT_EQ(SqlStringLiteral(std::string("a\0b\n\t\r\x01\x7f", 8)),
            "'a\\0b\\n\\t\\r\\x01\\x7F'");
}

TEST(LabelFilter, LiteralNeverEndsEarly) {
  // Every byte value, alone and after a backslash: the literal's only
  // unescaped quotes are its first and last byte.
  for (int c = 0; c < 256; ++c) {
    for (std::string value : {std::string(1, static_cast<char>(c)),
                              std::string("\\") + static_cast<char>(c)}) {
      std::string literal = SqlStringLiteral(value);
      ASSERT_EQ(literal.front(), '\'');
      ASSERT_EQ(literal.back(), '\'');
      bool escaped = false;
      for (size_t i = 1; i + 1 < literal.size(); ++i) {
        if (escaped) {
          escaped = false;
        } else if (literal[i] == '\\') {
          escaped = true;
        } else {
          ASSERT_NE(literal[i], '\'') << c;
          ASSERT_GE(static_cast<unsigned char>(literal[i]), 0x20) << c;
        }
      }
      ASSERT_FALSE(escaped) << c;
    }
  }
}

}  // namespace
}  // namespace profcpu::fleet
