#include "render/frame_tree.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"

namespace profcpu::render {
namespace {

static_assert(sizeof(FrameTree::Node) == 24, "frame_tree.h promises 24-byte nodes");

// The child index is a set of node indices hashed and compared by (parent,
// name) read from the nodes themselves: 4 bytes a slot instead of a map's 16.
struct ChildKey {
  uint32_t parent;
  uint32_t name;
};

struct ChildHash {
  using is_transparent = void;
  const std::vector<FrameTree::Node>* nodes;
  size_t operator()(ChildKey key) const {
    return absl::Hash<uint64_t>()((uint64_t{key.parent} << 32) | key.name);
  }
  size_t operator()(uint32_t id) const {
    return (*this)(ChildKey{(*nodes)[id].parent, (*nodes)[id].name});
  }
};

struct ChildEq {
  using is_transparent = void;
  const std::vector<FrameTree::Node>* nodes;
  ChildKey Key(uint32_t id) const { return {(*nodes)[id].parent, (*nodes)[id].name}; }
  ChildKey Key(ChildKey key) const { return key; }
  template <typename A, typename B>
  bool operator()(A a, B b) const {
    const ChildKey x = Key(a), y = Key(b);
    return x.parent == y.parent && x.name == y.name;
  }
};

}  // namespace

bool FrameNameLess(absl::string_view a, absl::string_view b) {
  const size_t common = std::min(a.size(), b.size());
  if (common > 0) {
    const int order = std::memcmp(a.data(), b.data(), common);
    if (order != 0) return order < 0;
  }
  if (a.size() == b.size()) return false;
  // One name is a prefix of the other; the shorter one continues with ';'.
  if (a.size() < b.size()) return static_cast<unsigned char>(b[common]) >= ';';
  return static_cast<unsigned char>(a[common]) < ';';
}

FrameTree FrameTree::Build(const fold::FoldedProfile& profile) {
  FrameTree tree;
  std::vector<Node>& nodes = tree.nodes_;
  // No more nodes than frames. Reserving that many up front costs address
  // space only (untouched pages are not resident) and saves the copies, and
  // the transient double footprint, of growing the vector.
  size_t frame_count = 1;
  for (const fold::FoldedStack& stack : profile.stacks) frame_count += stack.frames.size();
  nodes.reserve(std::min<size_t>(frame_count, kNone));
  nodes.emplace_back();  // the root, "all"

  absl::flat_hash_map<absl::string_view, uint32_t> name_ids;
  absl::flat_hash_set<uint32_t, ChildHash, ChildEq> children(0, ChildHash{&nodes},
                                                             ChildEq{&nodes});
  std::vector<uint32_t> path;  // node of each frame of the previous stack
  const fold::FoldedStack* previous = nullptr;

  for (const fold::FoldedStack& stack : profile.stacks) {
    if (stack.count == 0) continue;
    const std::vector<std::string>& frames = stack.frames;
    uint32_t node = 0;
    size_t depth = 0;
    // Sorted input repeats the previous stack's first frames: comparing the
    // strings is cheaper than hashing them again.
    if (previous != nullptr) {
      const size_t limit = std::min(previous->frames.size(), frames.size());
      while (depth < limit && frames[depth] == previous->frames[depth]) {
        node = path[depth];
        ++depth;
      }
    }
    path.resize(depth);
    for (; depth < frames.size(); ++depth) {
      const absl::string_view frame = frames[depth];
      const auto [name_it, new_name] =
          name_ids.try_emplace(frame, static_cast<uint32_t>(tree.names_.size()));
      if (new_name) tree.names_.push_back(frame);
      const ChildKey key{node, name_it->second};
      const auto child_it = children.find(key);
      if (child_it != children.end()) {
        node = *child_it;
      } else {
        Node child;
        child.parent = key.parent;
        child.name = key.name;
        node = static_cast<uint32_t>(nodes.size());
        nodes.push_back(child);
        children.insert(node);
      }
      path.push_back(node);
    }
    nodes[0].total = SaturatingAdd(nodes[0].total, stack.count);
    for (uint32_t id : path) nodes[id].total = SaturatingAdd(nodes[id].total, stack.count);
    previous = &stack;
  }
  tree.OrderChildren();
  return tree;
}

void FrameTree::OrderChildren() {
  // Rank the distinct names once, then bucket the nodes by rank (a counting
  // sort) and put each at the front of its parent's list, highest rank first:
  // every sibling list comes out sorted in linear time, with no per-parent sort.
  std::vector<uint32_t> by_name(names_.size());
  for (uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(), [this](uint32_t a, uint32_t b) {
    return FrameNameLess(names_[a], names_[b]);
  });
  std::vector<uint32_t> rank(names_.size());
  for (uint32_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = r;
  // Nodes per rank, shifted by one, then by a prefix sum each rank's first
  // slot in `sorted`.
  std::vector<uint32_t> next_slot(names_.size() + 1, 0);
  for (size_t i = 1; i < nodes_.size(); ++i) ++next_slot[rank[nodes_[i].name] + 1];
  for (size_t r = 1; r < next_slot.size(); ++r) next_slot[r] += next_slot[r - 1];
  std::vector<uint32_t> sorted(nodes_.size() - 1);
  for (size_t i = 1; i < nodes_.size(); ++i) {
    sorted[next_slot[rank[nodes_[i].name]]++] = static_cast<uint32_t>(i);
  }
  for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) {
    Node& parent = nodes_[nodes_[*it].parent];
    nodes_[*it].next_sibling = parent.first_child;
    parent.first_child = *it;
  }
}

uint64_t FrameTree::SelfCount(uint32_t id) const {
  uint64_t callees = 0;
  for (uint32_t child = nodes_[id].first_child; child != kNone;
       child = nodes_[child].next_sibling) {
    callees = SaturatingAdd(callees, nodes_[child].total);
  }
  return nodes_[id].total > callees ? nodes_[id].total - callees : 0;
}

uint32_t FrameTree::SkipNarrow(uint32_t id, double min_total, uint64_t* offset) const {
  while (id != kNone && static_cast<double>(nodes_[id].total) < min_total) {
    *offset = SaturatingAdd(*offset, nodes_[id].total);
    id = nodes_[id].next_sibling;
  }
  return id;
}

}  // namespace profcpu::render
