#include "render/stack_ends_json.h"

#include "gtest/gtest.h"

namespace profcpu::render {
namespace {

TEST(StackEndsJsonTest, CutShortByTheTopModulesAndRepairedApart) {
  fold::RecordingSummary s;
  s.header.callgraph = "fp+cfi";
  s.stacks_repaired = 1151;
  s.depth_limit_stacks = 3;
  s.stack_ends.cut_short = 28;
  for (int i = 0; i < 7; ++i) {
    s.stack_ends.cut_by_module.emplace_back("/lib/m" + std::to_string(i) + ".so", 7 - i);
  }
  const nlohmann::ordered_json j = StackEndsJson(s);
  EXPECT_EQ(j.dump(),
            "{\"cut_short\":28,\"cut_short_by_module\":{\"/lib/m0.so\":7,\"/lib/m1.so\":6,"
            "\"/lib/m2.so\":5,\"/lib/m3.so\":4,\"/lib/m4.so\":3},\"cut_short_elsewhere\":3,"
            "\"repaired\":1151,\"at_depth_limit\":3}");
}

}  // namespace
}  // namespace profcpu::render
