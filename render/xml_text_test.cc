#include "render/xml_text.h"

#include <string>

#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";

std::string Clean(absl::string_view text) {
  std::string out;
  AppendCleanText(text, &out);
  EXPECT_TRUE(IsCleanText(out)) << out;
  return out;
}

std::string Escaped(absl::string_view text) {
  std::string out;
  AppendXmlText(text, &out);
  return out;
}

std::string Rep(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += kReplacement;
  return out;
}

TEST(XmlTextTest, CleanTextPassesThrough) {
  for (absl::string_view text :
       {"", "main", "std::vector<int>::push_back", "caf\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC",
        "\xF0\x9F\x99\x82 smile", "\xEF\xBF\xBD"}) {
    EXPECT_TRUE(IsCleanText(text)) << text;
    EXPECT_EQ(Clean(text), text);
  }
}

TEST(XmlTextTest, ReplacesInvalidUtf8) {
  EXPECT_FALSE(IsCleanText("\xff\xfe"));
  EXPECT_EQ(Clean("a\xff\xfe" "b"), "a" + Rep(2) + "b");
  // A truncated sequence is one maximal subpart: one replacement.
  EXPECT_EQ(Clean("\xE2\x82" "A"), Rep(1) + "A");
  EXPECT_EQ(Clean("\xE2\x82"), Rep(1));
  // Overlong forms, surrogates and code points above U+10FFFF are ill-formed.
  EXPECT_EQ(Clean("\xC0\xAF"), Rep(2));
  EXPECT_EQ(Clean("\xE0\x80\xAF"), Rep(3));
  EXPECT_EQ(Clean("\xED\xA0\x80"), Rep(3));
  EXPECT_EQ(Clean("\xF4\x90\x80\x80"), Rep(4));
  EXPECT_EQ(Clean("\x80" "x"), Rep(1) + "x");
}

TEST(XmlTextTest, ReplacesControlCharacters) {
  EXPECT_EQ(Clean(absl::string_view("a\0b", 3)), "a" + Rep(1) + "b");
  EXPECT_EQ(Clean("\x01\x1f\t\n\r"), Rep(5));
  EXPECT_EQ(Clean("\x7f"), Rep(1));
  EXPECT_EQ(Clean("\xC2\x85"), Rep(1));  // NEL, a C1 control
  EXPECT_EQ(Clean("\xEF\xBF\xBE\xEF\xBF\xBF"), Rep(2));  // U+FFFE, U+FFFF
}

TEST(XmlTextTest, EscapesMarkup) {
  EXPECT_EQ(Escaped("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(Escaped("a&b\"c'd"), "a&amp;b&quot;c&#39;d");
  EXPECT_EQ(Escaped("]]>"), "]]&gt;");
  EXPECT_EQ(Escaped("&amp;"), "&amp;amp;");
  EXPECT_EQ(Escaped("\x01<\xff"), Rep(1) + "&lt;" + Rep(1));
}

TEST(XmlTextTest, CommentTextNeverHoldsDoubleHyphen) {
  std::string out;
  AppendXmlCommentText("a--b---c-", &out);
  EXPECT_EQ(out, "a- -b- - -c-");
  EXPECT_EQ(out.find("--"), std::string::npos);
  out.clear();
  AppendXmlCommentText("--><script>", &out);
  EXPECT_EQ(out, "- -&gt;&lt;script&gt;");
}

TEST(XmlTextTest, CodePoints) {
  const absl::string_view text = "\xC3\xA9\xE6\x97\xA5\xF0\x9F\x99\x82" "a";
  EXPECT_EQ(CountCodePoints(text), 4u);
  EXPECT_EQ(PrefixCodePoints(text, 0), "");
  EXPECT_EQ(PrefixCodePoints(text, 2), "\xC3\xA9\xE6\x97\xA5");
  EXPECT_EQ(PrefixCodePoints(text, 4), text);
  EXPECT_EQ(PrefixCodePoints(text, 10), text);
}

}  // namespace
}  // namespace profcpu::render
