#include "fleet/store/stable_id.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

TEST(StableIdTest, IsFnv1a64) {
  // The published FNV-1a 64 test vectors: the empty string and "a".
  EXPECT_EQ(StableId({""}), 0xcbf29ce484222325ull);
  EXPECT_EQ(StableId({"a"}), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(StableId({"foobar"}), 0x85944171f73967e8ull);
}

TEST(StableIdTest, SeparatesFieldsWithAZeroByte) {
  EXPECT_NE(StableId({"ab", "c"}), StableId({"a", "bc"}));
  EXPECT_EQ(StableId({"a", "b"}), StableId({std::string_view("a\0b", 3)}));
  EXPECT_NE(StableId({"main", "app", ""}), StableId({"main", "app"}));
}

TEST(StableIdTest, StackIdHashesFrameIdsLittleEndianRootFirst) {
  const std::vector<uint64_t> frames = {0x0102030405060708ull, 42};
  std::string bytes;
  for (uint64_t id : frames) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(id >> (8 * i)));
  }
  EXPECT_EQ(StackId(frames), StableId({bytes}));
  EXPECT_NE(StackId(frames), StackId({42, 0x0102030405060708ull}));  // order matters
  EXPECT_EQ(StackId({}), StableId({""}));
}

TEST(StableIdTest, FrameIdIsStableAcrossRuns) {
  // Agents on different nodes and versions must agree: values pinned from
  // an independent implementation (python, the same definition).
  EXPECT_EQ(StableId({"main", "app", "abcd"}), 5728197060788763881ull);
  EXPECT_EQ(StackId({1, 2, 3}), 15720935049292226309ull);
}

}  // namespace
}  // namespace profcpu::fleet
