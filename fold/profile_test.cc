#include "fold/profile.h"

#include <utility>

#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

// The stack index points into the stacks it indexes: copies and moves must
// still find every stack, and add new ones apart.
TEST(ProfileTest, StacksAreFoundAfterCopiesAndMoves) {
  Profile profile;
  const uint32_t a = profile.InternStack({1, 2, 3});
  const uint32_t b = profile.InternStack({1, 2});
  EXPECT_EQ(profile.InternStack({1, 2, 3}), a);

  Profile copy = profile;
  EXPECT_EQ(copy.InternStack({1, 2}), b);
  EXPECT_EQ(copy.InternStack({4}), 2u);
  EXPECT_EQ(profile.stack_count(), 2u);  // the original is apart

  Profile moved = std::move(copy);
  EXPECT_EQ(moved.InternStack({1, 2, 3}), a);
  EXPECT_EQ(moved.InternStack({4}), 2u);
  EXPECT_EQ(moved.stack_count(), 3u);
  EXPECT_EQ(copy.stack_count(), 0u);  // NOLINT: a moved-from Profile is empty
  EXPECT_EQ(copy.InternStack({7}), 0u);

  Profile assigned;
  assigned.InternStack({9});
  assigned = std::move(moved);
  EXPECT_EQ(assigned.stack(a), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(assigned.InternStack({4}), 2u);
}

TEST(ProfileTest, StacksMovedInAndTakenOut) {
  Profile profile;
  std::vector<uint32_t> a = {1, 2, 3};
  EXPECT_EQ(profile.InternStack(std::vector<uint32_t>{4, 5}), 0u);
  EXPECT_EQ(profile.InternStack(std::move(a)), 1u);
  // Found again whether given by copy or moved in.
  EXPECT_EQ(profile.InternStack(std::vector<uint32_t>{1, 2, 3}), 1u);
  const std::vector<uint32_t> b = {4, 5};
  EXPECT_EQ(profile.InternStack(b), 0u);
  std::vector<std::vector<uint32_t>> taken = profile.TakeStacks();
  EXPECT_EQ(taken, (std::vector<std::vector<uint32_t>>{{4, 5}, {1, 2, 3}}));
  EXPECT_EQ(profile.stack_count(), 0u);
  // Nothing of the old stacks is found: a new one starts at 0.
  EXPECT_EQ(profile.InternStack(b), 0u);
}

}  // namespace
}  // namespace profcpu::fold
