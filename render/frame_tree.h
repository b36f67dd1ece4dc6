// The merged call tree a flame graph draws. Frames merge when they have the
// same path from the root and siblings are ordered by name, as flamegraph.pl
// merges and orders them.
#ifndef PROFCPU_RENDER_FRAME_TREE_H_
#define PROFCPU_RENDER_FRAME_TREE_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/string_view.h"
#include "fold/folded_profile.h"

namespace profcpu::render {

// Sibling order. flamegraph.pl sorts its input lines and merges neighbours, so
// siblings appear in the order of "name;rest-of-stack": names compare as if
// each were followed by ';'. (A plain comparison differs only when one name is
// a prefix of the other, e.g. "foo" sorts after "foo!bar" here.)
bool FrameNameLess(absl::string_view a, absl::string_view b);

// a + b, or UINT64_MAX when that overflows: hostile or corrupt counts must not
// wrap around into nonsense geometry.
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

class FrameTree {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Nodes live in one vector and link by index: 24 bytes a frame and no
  // per-node allocation. Depth and horizontal position are not stored; the
  // traversal below derives them for the frames actually drawn.
  struct Node {
    uint32_t name = kNone;          // index for name(); kNone for the root
    uint32_t parent = kNone;        // kNone for the root
    uint32_t first_child = kNone;   // children in drawing order
    uint32_t next_sibling = kNone;
    uint64_t total = 0;             // count of this frame, callees included
  };

  // Merges the stacks of `profile`, which must outlive the tree (names are
  // views of its strings). Stacks with a zero count are left out; counts that
  // would overflow saturate. Time is linear in the number of frames plus one
  // sort of the distinct names; input sorted as stackcollapse writes it takes
  // a faster path, but any order gives the same tree.
  static FrameTree Build(const fold::FoldedProfile& profile);
  // The tree would outlive a temporary profile's strings.
  static FrameTree Build(fold::FoldedProfile&& profile) = delete;

  // nodes()[0] is the root, "all". A parent always has a smaller index than
  // its children.
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& root() const { return nodes_[0]; }
  absl::string_view name(uint32_t name_id) const { return names_[name_id]; }
  size_t name_count() const { return names_.size(); }

  // The count of stacks that end in this frame: its total less its callees'.
  uint64_t SelfCount(uint32_t id) const;

  // Calls visit(id, depth, start) for the root and every node whose total is
  // at least `min_total`, parents before callees and siblings left to right.
  // `start` is the node's left edge in counts from the root's; a frame's own
  // samples sit left of its callees, as in flamegraph.pl, whose sorted input
  // puts "a;b 5" before "a;b;c 3" (' ' sorts before ';'). A callee is never
  // wider than its caller, so the nodes visited form a tree. Iterative, as
  // stacks can be thousands of frames deep.
  template <typename Visit>
  void ForEachAtLeast(double min_total, Visit visit) const;

 private:
  FrameTree() = default;
  void OrderChildren();
  // The first node from `id` along its sibling list with a total of at least
  // min_total; adds the totals of the nodes skipped to *offset.
  uint32_t SkipNarrow(uint32_t id, double min_total, uint64_t* offset) const;

  std::vector<Node> nodes_;
  std::vector<absl::string_view> names_;  // interned: one entry per distinct name
};

template <typename Visit>
void FrameTree::ForEachAtLeast(double min_total, Visit visit) const {
  std::vector<uint64_t> start_at_depth = {0};  // of the node visited at each depth
  uint32_t id = 0;
  uint32_t depth = 0;
  for (;;) {
    visit(id, depth, start_at_depth[depth]);
    uint64_t offset = SaturatingAdd(start_at_depth[depth], SelfCount(id));
    uint32_t next = SkipNarrow(nodes_[id].first_child, min_total, &offset);
    if (next != kNone) {
      ++depth;
      if (start_at_depth.size() <= depth) start_at_depth.resize(depth + 1);
    } else {
      // Climb until a node (this one or an ancestor) has a wide enough sibling.
      while (next == kNone && id != 0) {
        offset = SaturatingAdd(start_at_depth[depth], nodes_[id].total);
        next = SkipNarrow(nodes_[id].next_sibling, min_total, &offset);
        if (next == kNone) {
          id = nodes_[id].parent;
          --depth;
        }
      }
      if (next == kNone) return;
    }
    start_at_depth[depth] = offset;
    id = next;
  }
}

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_FRAME_TREE_H_
