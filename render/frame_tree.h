// The merged call tree a flame graph draws. Frames merge when they have the
// same path from the root and siblings are ordered by name, as flamegraph.pl
// merges and orders them; a flame chart instead keeps the input's order and
// merges a frame only with the same frame of the stack just before it.
#ifndef PROFCPU_RENDER_FRAME_TREE_H_
#define PROFCPU_RENDER_FRAME_TREE_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
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

// A differential stack's delta: its count less its baseline (saturating).
inline int64_t FoldedDelta(const fold::FoldedStack& stack) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (stack.count >= stack.baseline) {
    return static_cast<int64_t>(std::min(stack.count - stack.baseline, kMax));
  }
  return -static_cast<int64_t>(std::min(stack.baseline - stack.count, kMax));
}

struct FrameTreeOptions {
  // flamegraph.pl --flamechart: stacks stay in input (time) order and a frame
  // merges only with the same frame of the previous stack.
  bool flamechart = false;
  // Keep each node's delta (differential flame graphs).
  bool differential = false;
  // Frames with a total below this are never drawn, nor are their callees
  // (ForEachAtLeast): Build() keeps such a frame, whose width still places
  // its siblings, but not its callees. Memory then follows what is drawn,
  // not every distinct stack (millions of frames on deep, varied stacks).
  // Not for flame charts or differential trees.
  double drop_callees_below = 0;
};

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

  // Merges stacks one at a time (below).
  class Builder;

  // Merges the stacks of `profile` (frames root first, `count` as width, and
  // for a differential profile `count - baseline` as delta). Time is linear
  // in the number of frames plus one sort of the distinct names; input sorted
  // as stackcollapse writes it takes a faster path, but any order gives the
  // same tree (except for flame charts, where order is the point).
  static FrameTree Build(const fold::FoldedProfile& profile, FrameTreeOptions options = {});

  // nodes()[0] is the root, "all". A parent always has a smaller index than
  // its children.
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& root() const { return nodes_[0]; }
  absl::string_view name(uint32_t name_id) const { return names_[name_id]; }
  size_t name_count() const { return names_.size(); }

  // The count of stacks that end in this frame: its total less its callees'.
  uint64_t SelfCount(uint32_t id) const;

  bool differential() const { return !deltas_.empty(); }
  // Change of the frame's own count (differential trees; 0 otherwise).
  int64_t delta(uint32_t id) const { return deltas_.empty() ? 0 : deltas_[id]; }
  // The largest change of any one input stack, at least 1: flamegraph.pl's
  // scale for the differential colours.
  uint64_t max_delta() const { return max_delta_; }

  // Calls visit(id, depth, start) for the root and every node whose total is
  // at least `min_total`, parents before callees and siblings left to right.
  // `start` is the node's left edge in counts from the root's; a frame's own
  // samples sit left of its callees, as in flamegraph.pl, whose sorted input
  // puts "a;b 5" before "a;b;c 3" (' ' sorts before ';'); in a flame chart
  // each frame starts where its first stack began. A callee is never
  // wider than its caller, so the nodes visited form a tree. Iterative, as
  // stacks can be thousands of frames deep.
  template <typename Visit>
  void ForEachAtLeast(double min_total, Visit visit) const;

 private:
  FrameTree() = default;
  void OrderChildren(bool by_name);
  // The first node from `id` along its sibling list with a total of at least
  // min_total; adds the totals of the nodes skipped to *offset.
  uint32_t SkipNarrow(uint32_t id, double min_total, uint64_t* offset) const;

  std::vector<Node> nodes_;
  std::vector<absl::string_view> names_;  // interned: one entry per distinct name
  // The names' bytes, in blocks that never move, so the views stay valid.
  std::vector<std::unique_ptr<char[]>> name_blocks_;
  std::vector<int64_t> deltas_;           // per node, differential trees only
  // Per node, flame charts only: where the node begins. In time order a
  // frame's own samples may lie between its callees, not left of them.
  std::vector<uint64_t> starts_;
  uint64_t max_delta_ = 1;
};

// Merges stacks one at a time, so a caller can stream input through it
// without holding all of it: the tree copies each distinct name once.
class FrameTree::Builder {
 public:
  explicit Builder(FrameTreeOptions options = {});
  ~Builder();
  // The child index points into the tree being built.
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // Adds a stack, frames root first; the views need live only for the
  // call. Stacks with a zero count and no delta add nothing; counts that
  // would overflow saturate. `delta` (differential trees) is added to the
  // last frame's delta, as flamegraph.pl colours a frame by the change of
  // its own count; a zero-count stack's frames are added with no width for
  // it, so that a frame it shares with later stacks shows that change.
  void Add(absl::Span<const absl::string_view> frames, uint64_t count, int64_t delta = 0);
  // The same for frames given as InternName() ids.
  void AddInterned(absl::Span<const uint32_t> names, uint64_t count, int64_t delta = 0);
  // The tree's id for `name` (added if new).
  uint32_t InternName(absl::string_view name);
  // Promises that the stacks still to come are grouped: all that share a
  // first frame, first two frames, ... come one after another (any
  // lexicographic order does it), and none shares a frame with the stacks
  // added before. A frame that differs from the previous stack's is then a
  // new node, and no lookup is made. Not for flame charts.
  void ExpectGroupedInput();

  // Starts keeping deltas (all zero so far), for input that turns out to be
  // differential after some stacks were added.
  void MakeDifferential();
  // Multiplies every count, start and delta so far by `multiplier`
  // (saturating): for input whose counts turn out to have decimals after
  // some were added as integers.
  void ScaleCounts(uint64_t multiplier);

  FrameTree Finish() &&;

 private:
  uint32_t NewNode(uint32_t parent, uint32_t name);
  // Whether a stack of this count and delta adds nothing (noting its delta).
  bool Skips(uint64_t count, int64_t delta);
  // `node`'s child named `name`, made if new.
  uint32_t ChildOf(uint32_t node, uint32_t name);
  // Adds the stack in path_ to the totals (and its delta to its last frame).
  void CountPath(uint64_t count, int64_t delta);
  // Add() and AddInterned(): frames compared with the previous stack's by
  // same_name(node's name id, frame), named by name_of(frame).
  template <typename Frames, typename SameName, typename NameOf>
  void AddStack(const Frames& frames, SameName same_name, NameOf name_of, uint64_t count,
                int64_t delta);

  struct ChildIndex;
  // FrameTree::Build's way for flame graphs (below).
  friend class FrameTree;
  // Builds the whole tree of `profile`'s stacks (names mapped by
  // `tree_name`) by partitioning them one frame deeper at a time, in place
  // of sorting whole stacks and adding them one by one: a frame too narrow
  // to draw (drop_callees_below) ends its partition, so on deep, distinct
  // stacks the work follows the frames drawn, not every frame of every
  // stack. Nodes come out in the order Add() of the sorted stacks makes them.
  void AddPartitioned(const fold::FoldedProfile& profile,
                      const std::vector<uint32_t>& tree_name);

  FrameTreeOptions options_;
  FrameTree tree_;
  absl::flat_hash_map<absl::string_view, uint32_t> name_ids_;
  // Finds a node's child by name (not used for flame charts).
  std::unique_ptr<ChildIndex> children_;
  // In grouped input, the nodes of the previous stack below the frame where
  // the next one differs are complete: drops the callees of those too
  // narrow to draw (they are the newest nodes, as input is grouped).
  void DropNarrowCallees(size_t from_depth);

  bool grouped_ = false;  // ExpectGroupedInput()
  std::vector<uint32_t> path_;  // node of each frame of the previous stack
  size_t block_left_ = 0;       // free bytes at block_next_ in the newest name block
  char* block_next_ = nullptr;
};

template <typename Visit>
void FrameTree::ForEachAtLeast(double min_total, Visit visit) const {
  std::vector<uint64_t> start_at_depth = {0};  // of the node visited at each depth
  uint32_t id = 0;
  uint32_t depth = 0;
  for (;;) {
    visit(id, depth, starts_.empty() ? start_at_depth[depth] : starts_[id]);
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
