#include "render/folded_tree_reader.h"

#include <string>

#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

FrameTree ReadText(const std::string& text, FoldedTreeReader* reader) {
  const std::string path = std::string(::testing::TempDir()) + "/folded_tree_reader.txt";
  EXPECT_TRUE(base::WriteFile(path, text).ok());
  auto lines = fold::LineReader::Open(path);
  EXPECT_TRUE(lines.ok()) << lines.status();
  EXPECT_TRUE(reader->Read(*lines).ok());
  return std::move(*reader).Finish();
}

TEST(FoldedTreeReaderTest, SumsStacksAndCountsIgnoredLines) {
  FoldedTreeReader reader{FlameGraphOptions()};
  const FrameTree tree = ReadText("app;main;work 3\nnot a folded line\napp;main 2\n", &reader);
  EXPECT_EQ(reader.stats().lines, 3u);
  EXPECT_EQ(reader.stats().ignored_lines, 1u);
  EXPECT_DOUBLE_EQ(reader.total(), 5);
  EXPECT_DOUBLE_EQ(reader.count_unit(), 1);
  EXPECT_EQ(tree.root().total, 5u);
}

TEST(FoldedTreeReaderTest, DecimalCountsRescaleWhatCameBefore) {
  FoldedTreeReader reader{FlameGraphOptions()};
  const FrameTree tree = ReadText("a;b 2\na;c 1.25\n", &reader);
  EXPECT_DOUBLE_EQ(reader.count_unit(), 0.01);
  EXPECT_DOUBLE_EQ(reader.total(), 3.25);
  EXPECT_EQ(tree.root().total, 325u);  // in hundredths
}

}  // namespace
}  // namespace profcpu::render
