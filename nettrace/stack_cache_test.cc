#include "nettrace/stack_cache.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "base/byte_io.h"
#include "gtest/gtest.h"

namespace profcpu::nettrace {
namespace {

using Stack = std::vector<uint64_t>;

std::string Addresses(const Stack& stack, int32_t pointer_size = 8) {
  std::string bytes;
  base::ByteWriter w(&bytes);
  for (uint64_t address : stack) {
    if (pointer_size == 8) {
      w.U64(address);
    } else {
      w.U32(static_cast<uint32_t>(address));
    }
  }
  return bytes;
}

// The stack `id` names, or {0xdead} when the cache does not hold it.
Stack Get(const NettraceStackCache& cache, uint32_t id) {
  absl::Span<const uint64_t> span;
  if (!cache.Find(id, &span)) return {0xdead};
  return Stack(span.begin(), span.end());
}

TEST(NettraceStackCacheTest, KeepsStacksByIdAndForgetsThemWhenCleared) {
  NettraceStackCache cache(1 << 20);
  EXPECT_TRUE(cache.Add(1, "", 8));
  EXPECT_TRUE(cache.Add(2, Addresses({0x10, 0x20}), 8));
  EXPECT_TRUE(cache.Add(3, Addresses({0x30}, 4), 4));
  EXPECT_EQ(Get(cache, 1), Stack{});
  EXPECT_EQ(Get(cache, 2), (Stack{0x10, 0x20}));
  EXPECT_EQ(Get(cache, 3), Stack{0x30});
  EXPECT_EQ(Get(cache, 0), Stack{0xdead});
  EXPECT_EQ(Get(cache, 4), Stack{0xdead});
  EXPECT_EQ(cache.bytes(), (3 + 3) * 8u);
  cache.Clear();
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_EQ(Get(cache, 2), Stack{0xdead});
  EXPECT_TRUE(cache.Add(1, Addresses({0x40}), 8));
  EXPECT_EQ(Get(cache, 1), Stack{0x40});
}

TEST(NettraceStackCacheTest, IdsNeedNotStartAtOne) {
  NettraceStackCache cache(1 << 20);
  EXPECT_TRUE(cache.Add(4000000000u, Addresses({0x10}), 8));
  EXPECT_TRUE(cache.Add(4000000001u, Addresses({0x20}), 8));
  EXPECT_EQ(Get(cache, 4000000001u), Stack{0x20});
  EXPECT_EQ(Get(cache, 3999999999u), Stack{0xdead});
  // Past 32 bits: no event can name it.
  cache.Clear();
  EXPECT_TRUE(cache.Add(0xffffffff, Addresses({0x30}), 8));
  EXPECT_TRUE(cache.Add(0x100000000, Addresses({0x40}), 8));
  EXPECT_EQ(Get(cache, 0xffffffff), Stack{0x30});
  EXPECT_EQ(Get(cache, 0), Stack{0xdead});
}

TEST(NettraceStackCacheTest, OutOfOrderIdsAreNotKeptAndRedefinitionsReplace) {
  NettraceStackCache cache(1 << 20);
  EXPECT_TRUE(cache.Add(5, Addresses({0x10}), 8));
  EXPECT_FALSE(cache.Add(7, Addresses({0x20}), 8));  // a gap
  EXPECT_FALSE(cache.Add(4, Addresses({0x20}), 8));  // before the first
  EXPECT_TRUE(cache.Add(5, Addresses({0x50, 0x60}), 8));
  EXPECT_EQ(Get(cache, 5), (Stack{0x50, 0x60}));
  EXPECT_EQ(Get(cache, 7), Stack{0xdead});
}

TEST(NettraceStackCacheTest, NothingPastTheBudget) {
  // Each stack costs its addresses and an entry, 8 bytes each.
  NettraceStackCache cache(48);
  EXPECT_TRUE(cache.Add(1, Addresses({0x10, 0x20}), 8));  // 24
  EXPECT_FALSE(cache.Add(2, Addresses({0x10, 0x20, 0x30}), 8));  // 24 + 32 > 48
  EXPECT_FALSE(cache.Add(3, Addresses({0x10}), 8));  // would leave 2 without an entry
  EXPECT_EQ(cache.bytes(), 24u);
  // A redefinition that does not fit leaves the id unknown, not stale.
  EXPECT_FALSE(cache.Add(1, Addresses({1, 2, 3, 4}), 8));
  EXPECT_EQ(Get(cache, 1), Stack{0xdead});
  EXPECT_LE(cache.bytes(), 48u);

  NettraceStackCache none(0);
  EXPECT_FALSE(none.Add(1, "", 8));
  EXPECT_EQ(Get(none, 1), Stack{0xdead});
}

}  // namespace
}  // namespace profcpu::nettrace
