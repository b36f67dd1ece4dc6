#include "render/frame_tree.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"

namespace profcpu::render {
namespace {

static_assert(sizeof(FrameTree::Node) == 24, "frame_tree.h promises 24-byte nodes");

// Names are copied into blocks of this size (longer names get their own).
constexpr size_t kNameBlockBytes = size_t{64} << 10;

// Node indices are 32-bit; past this many nodes new frames are not added (the
// stack's count stays with its deepest frame already in the tree). Memory
// runs out long before a real profile gets here.
constexpr size_t kMaxNodes = FrameTree::kNone - 1;

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

int64_t SaturatingAddSigned(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

uint64_t Magnitude(int64_t value) {
  // Negating in uint64_t keeps INT64_MIN defined.
  return value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
}

}  // namespace

struct FrameTree::Builder::ChildIndex {
  explicit ChildIndex(const std::vector<Node>* nodes) : set(0, ChildHash{nodes}, ChildEq{nodes}) {}
  absl::flat_hash_set<uint32_t, ChildHash, ChildEq> set;
};

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

FrameTree::Builder::Builder(FrameTreeOptions options) : options_(options) {
  tree_.nodes_.emplace_back();  // the root, "all"
  if (options_.differential) tree_.deltas_.push_back(0);
  if (options_.flamechart) {
    tree_.starts_.push_back(0);
  } else {
    children_ = std::make_unique<ChildIndex>(&tree_.nodes_);
  }
}

FrameTree::Builder::~Builder() = default;

void FrameTree::Builder::ExpectGroupedInput() {
  children_.reset();
  grouped_ = !options_.flamechart;
}

uint32_t FrameTree::Builder::InternName(absl::string_view name) {
  if (auto it = name_ids_.find(name); it != name_ids_.end()) return it->second;
  absl::string_view stored;
  if (!name.empty()) {
    if (name.size() > block_left_) {
      const size_t size = std::max(kNameBlockBytes, name.size());
      tree_.name_blocks_.emplace_back(new char[size]);
      block_next_ = tree_.name_blocks_.back().get();
      block_left_ = size;
    }
    std::memcpy(block_next_, name.data(), name.size());
    stored = absl::string_view(block_next_, name.size());
    block_next_ += name.size();
    block_left_ -= name.size();
  }
  const uint32_t id = static_cast<uint32_t>(tree_.names_.size());
  tree_.names_.push_back(stored);
  name_ids_.emplace(stored, id);
  return id;
}

uint32_t FrameTree::Builder::NewNode(uint32_t parent, uint32_t name) {
  Node child;
  child.parent = parent;
  child.name = name;
  const uint32_t id = static_cast<uint32_t>(tree_.nodes_.size());
  tree_.nodes_.push_back(child);
  if (options_.differential) tree_.deltas_.push_back(0);
  // A flame chart's node begins where the stack that created it begins.
  if (options_.flamechart) tree_.starts_.push_back(tree_.nodes_[0].total);
  return id;
}

bool FrameTree::Builder::Skips(uint64_t count, int64_t delta) {
  if (options_.differential) tree_.max_delta_ = std::max(tree_.max_delta_, Magnitude(delta));
  // A stack that vanished ("a;b 4 0") still carries its change: flamegraph.pl
  // opens its frames with no width and keeps the delta on its last frame,
  // which later stacks through that frame ("a;b;c 1 1") make visible.
  return count == 0 && (delta == 0 || !options_.differential);
}

uint32_t FrameTree::Builder::ChildOf(uint32_t node, uint32_t name) {
  if (children_ == nullptr) return NewNode(node, name);
  const auto it = children_->set.find(ChildKey{node, name});
  if (it != children_->set.end()) return *it;
  const uint32_t child = NewNode(node, name);
  children_->set.insert(child);
  return child;
}

void FrameTree::Builder::CountPath(uint64_t count, int64_t delta) {
  std::vector<Node>& nodes = tree_.nodes_;
  nodes[0].total = SaturatingAdd(nodes[0].total, count);
  for (uint32_t id : path_) nodes[id].total = SaturatingAdd(nodes[id].total, count);
  if (options_.differential) {
    int64_t& own = tree_.deltas_[path_.empty() ? 0 : path_.back()];
    own = SaturatingAddSigned(own, delta);
  }
}

template <typename Frames, typename SameName, typename NameOf>
void FrameTree::Builder::AddStack(const Frames& frames, SameName same_name, NameOf name_of,
                                  uint64_t count, int64_t delta) {
  if (Skips(count, delta)) return;
  const std::vector<Node>& nodes = tree_.nodes_;
  uint32_t node = 0;
  size_t depth = 0;
  // Sorted input repeats the previous stack's first frames: comparing them
  // is cheaper than looking them up again. For a flame chart this is the
  // only merging there is.
  const size_t limit = std::min(path_.size(), frames.size());
  while (depth < limit && same_name(nodes[path_[depth]].name, frames[depth])) {
    node = path_[depth];
    ++depth;
  }
  if (grouped_ && options_.drop_callees_below > 0) DropNarrowCallees(depth);
  path_.resize(depth);
  for (; depth < frames.size() && nodes.size() < kMaxNodes; ++depth) {
    node = ChildOf(node, name_of(frames[depth]));
    path_.push_back(node);
  }
  CountPath(count, delta);
}

void FrameTree::Builder::Add(absl::Span<const absl::string_view> frames, uint64_t count,
                             int64_t delta) {
  AddStack(
      frames, [this](uint32_t name, absl::string_view frame) { return tree_.names_[name] == frame; },
      [this](absl::string_view frame) { return InternName(frame); }, count, delta);
}

void FrameTree::Builder::AddInterned(absl::Span<const uint32_t> names, uint64_t count,
                                     int64_t delta) {
  AddStack(
      names, [](uint32_t name, uint32_t frame) { return name == frame; },
      [](uint32_t frame) { return frame; }, count, delta);
}

void FrameTree::Builder::DropNarrowCallees(size_t from_depth) {
  if (options_.differential || options_.flamechart) return;
  std::vector<Node>& nodes = tree_.nodes_;
  for (size_t depth = path_.size(); depth-- > from_depth;) {
    const uint32_t id = path_[depth];
    if (static_cast<double>(nodes[id].total) < options_.drop_callees_below) {
      nodes.resize(id + 1);  // its callees, created after it
    }
  }
}

void FrameTree::Builder::MakeDifferential() {
  if (options_.differential) return;
  options_.differential = true;
  tree_.deltas_.assign(tree_.nodes_.size(), 0);
}

void FrameTree::Builder::ScaleCounts(uint64_t multiplier) {
  auto scale = [multiplier](uint64_t value) {
    uint64_t product;
    return __builtin_mul_overflow(value, multiplier, &product)
               ? std::numeric_limits<uint64_t>::max()
               : product;
  };
  for (Node& node : tree_.nodes_) node.total = scale(node.total);
  for (uint64_t& start : tree_.starts_) start = scale(start);
  for (int64_t& delta : tree_.deltas_) {
    const uint64_t magnitude = std::min<uint64_t>(scale(Magnitude(delta)), INT64_MAX);
    delta = delta < 0 ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  }
  tree_.max_delta_ = scale(tree_.max_delta_);
}

FrameTree FrameTree::Builder::Finish() && {
  tree_.OrderChildren(/*by_name=*/!options_.flamechart);
  children_.reset();
  return std::move(tree_);
}

void FrameTree::Builder::AddPartitioned(const fold::FoldedProfile& profile,
                                        const std::vector<uint32_t>& tree_name) {
  // A stack as the partitions move it: 24 bytes, its frames read in place.
  struct StackRef {
    const uint32_t* frames;
    size_t size;
    uint64_t count;
  };
  std::vector<StackRef> stacks;
  stacks.reserve(profile.stacks.size());
  std::vector<Node>& nodes = tree_.nodes_;
  for (const fold::FoldedStack& stack : profile.stacks) {
    if (stack.count == 0) continue;  // adds nothing (not differential)
    stacks.push_back({stack.frames.data(), stack.frames.size(), stack.count});
    nodes[0].total = SaturatingAdd(nodes[0].total, stack.count);
  }
  std::vector<StackRef> scratch(stacks.size());
  // Each stack's frame at the depth being partitioned: every stack's frames
  // are their own allocation, so each is read (a cache miss) only once.
  std::vector<uint32_t> keys(stacks.size());

  // A node still to make: its stacks are stacks[begin, end), which all
  // share its path; `depth` indexes its own frame.
  struct Pending {
    uint32_t parent;
    uint32_t name;
    size_t depth;
    size_t begin;
    size_t end;
    uint64_t total;
  };
  std::vector<Pending> pending;
  // Per tree name, reset after each partition: stacks and total of the
  // child of that name, then where its stacks go.
  std::vector<uint32_t> name_stacks(tree_.names_.size(), 0);
  std::vector<uint64_t> name_total(tree_.names_.size(), 0);
  std::vector<size_t> name_next(tree_.names_.size(), 0);
  std::vector<uint32_t> names_seen;
  constexpr size_t kPrefetchAhead = 16;

  // Groups stacks[begin, end) (all through `parent`) by their frame at
  // `depth` and queues a child per name, the smallest name popped first:
  // the order Add() of the stacks sorted by frame ids makes nodes in.
  auto partition = [&](uint32_t parent, size_t depth, size_t begin, size_t end) {
    names_seen.clear();
    size_t ended = 0;  // stacks that end at `parent`: its own samples
    for (size_t i = begin; i < end; ++i) {
      if (i + kPrefetchAhead < end) {
        const StackRef& ahead = stacks[i + kPrefetchAhead];
        if (ahead.size > depth) __builtin_prefetch(ahead.frames + depth);
      }
      const StackRef& stack = stacks[i];
      if (stack.size <= depth) {
        keys[i] = kNone;
        ++ended;
        continue;
      }
      const uint32_t name = tree_name[stack.frames[depth]];
      keys[i] = name;
      if (name_stacks[name]++ == 0) names_seen.push_back(name);
      name_total[name] = SaturatingAdd(name_total[name], stack.count);
    }
    if (names_seen.empty()) return;
    std::sort(names_seen.begin(), names_seen.end());
    size_t next = begin + ended;
    for (uint32_t name : names_seen) {
      name_next[name] = next;
      next += name_stacks[name];
    }
    for (auto it = names_seen.rbegin(); it != names_seen.rend(); ++it) {
      const uint32_t name = *it;
      pending.push_back({parent, name, depth, name_next[name],
                         name_next[name] + name_stacks[name], name_total[name]});
    }
    size_t next_ended = begin;
    for (size_t i = begin; i < end; ++i) {
      scratch[keys[i] == kNone ? next_ended++ : name_next[keys[i]]++] = stacks[i];
    }
    std::copy(scratch.begin() + static_cast<ptrdiff_t>(begin),
              scratch.begin() + static_cast<ptrdiff_t>(end),
              stacks.begin() + static_cast<ptrdiff_t>(begin));
    for (uint32_t name : names_seen) {
      name_stacks[name] = 0;
      name_total[name] = 0;
    }
  };

  // How many frames from `depth` on all of stacks[begin, end) share: one
  // pass makes that chain of single callees, where a partition per frame
  // would read every stack again for each (deep stacks share long runs:
  // thread start to the busy loop, or a stack alone below some frame).
  // Frame ids compare as names do (the profile's names are interned); a
  // chain cut short only leaves the rest to the partitions.
  auto shared_frames = [&](size_t depth, size_t begin, size_t end) -> size_t {
    const StackRef& first = stacks[begin];
    if (first.size <= depth) return 0;
    size_t shared = first.size - depth;
    auto keep_common = [&](const StackRef& stack) {
      const size_t limit = stack.size <= depth ? 0 : std::min(shared, stack.size - depth);
      size_t same = 0;
      while (same < limit && stack.frames[depth + same] == first.frames[depth + same]) ++same;
      shared = same;
    };
    // The last stack first: in sorted input it differs the soonest.
    keep_common(stacks[end - 1]);
    for (size_t i = begin + 1; i + 1 < end && shared > 0; ++i) {
      if (i + kPrefetchAhead + 1 < end) __builtin_prefetch(stacks[i + kPrefetchAhead].frames + depth);
      keep_common(stacks[i]);
    }
    return shared;
  };

  // Makes the callees of `node` (whose stacks are stacks[begin, end), of
  // this total): the shared chain, then a partition below it.
  auto expand = [&](uint32_t node, size_t depth, size_t begin, size_t end, uint64_t total) {
    if (begin == end) return;
    const size_t shared = shared_frames(depth, begin, end);
    const uint32_t* chain = stacks[begin].frames;
    for (size_t i = 0; i < shared; ++i) {
      if (nodes.size() >= kMaxNodes) return;  // its count stays its caller's own
      node = NewNode(node, tree_name[chain[depth + i]]);
      nodes[node].total = total;
      // Only a root narrower than -minwidth (an odd option) gets here.
      if (static_cast<double>(total) < options_.drop_callees_below) return;
    }
    partition(node, depth + shared, begin, end);
  };

  expand(0, 0, 0, stacks.size(), nodes[0].total);
  while (!pending.empty()) {
    const Pending node = pending.back();
    pending.pop_back();
    if (nodes.size() >= kMaxNodes) continue;  // its count stays its caller's own
    const uint32_t id = NewNode(node.parent, node.name);
    nodes[id].total = node.total;
    // A frame too narrow to draw keeps its width (it places its siblings)
    // but not its callees, as DropNarrowCallees() leaves Add()'s tree.
    if (static_cast<double>(node.total) < options_.drop_callees_below) continue;
    expand(id, node.depth + 1, node.begin, node.end, node.total);
  }
}

FrameTree FrameTree::Build(const fold::FoldedProfile& profile, FrameTreeOptions options) {
  options.differential = options.differential || profile.differential;
  Builder builder(options);
  // The profile's names are interned already: map its ids to the tree's once.
  std::vector<uint32_t> tree_name(profile.names().size());
  for (size_t i = 0; i < tree_name.size(); ++i) tree_name[i] = builder.InternName(profile.name(i));
  if (!options.flamechart && !options.differential) {
    builder.ExpectGroupedInput();  // no child index: partitions find children
    builder.AddPartitioned(profile, tree_name);
    return std::move(builder).Finish();
  }
  // Merging does not depend on the order of the stacks (a flame chart's
  // does). Taken in the order of their frame ids, stacks that share a prefix
  // are neighbours, so a frame that differs from the previous stack's is a
  // new node: the tree is built with no lookup at all.
  std::vector<uint32_t> order(profile.stacks.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  if (!options.flamechart) {
    std::sort(order.begin(), order.end(), [&profile](uint32_t a, uint32_t b) {
      const std::vector<uint32_t>& x = profile.stacks[a].frames;
      const std::vector<uint32_t>& y = profile.stacks[b].frames;
      return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
    });
    builder.ExpectGroupedInput();
  }
  std::vector<uint32_t> names;
  for (uint32_t i : order) {
    const fold::FoldedStack& stack = profile.stacks[i];
    names.clear();
    for (uint32_t id : stack.frames) names.push_back(tree_name[id]);
    builder.AddInterned(names, stack.count, profile.differential ? FoldedDelta(stack) : 0);
  }
  return std::move(builder).Finish();
}

void FrameTree::OrderChildren(bool by_name) {
  // Nodes are created in input order, so walking them backwards and putting
  // each at the front of its parent's list leaves every list in input order.
  // Sorted by name instead: rank the distinct names once, bucket the nodes by
  // rank (a counting sort) and do the same in rank order: every sibling list
  // comes out sorted in linear time, with no per-parent sort.
  std::vector<uint32_t> order(nodes_.size() - 1);
  for (size_t i = 1; i < nodes_.size(); ++i) order[i - 1] = static_cast<uint32_t>(i);
  if (by_name) {
    std::vector<uint32_t> by_rank(names_.size());
    for (uint32_t i = 0; i < by_rank.size(); ++i) by_rank[i] = i;
    std::sort(by_rank.begin(), by_rank.end(), [this](uint32_t a, uint32_t b) {
      return FrameNameLess(names_[a], names_[b]);
    });
    std::vector<uint32_t> rank(names_.size());
    for (uint32_t r = 0; r < by_rank.size(); ++r) rank[by_rank[r]] = r;
    // Nodes per rank, shifted by one, then by a prefix sum each rank's first
    // slot in `order`.
    std::vector<uint32_t> next_slot(names_.size() + 1, 0);
    for (size_t i = 1; i < nodes_.size(); ++i) ++next_slot[rank[nodes_[i].name] + 1];
    for (size_t r = 1; r < next_slot.size(); ++r) next_slot[r] += next_slot[r - 1];
    for (size_t i = 1; i < nodes_.size(); ++i) {
      order[next_slot[rank[nodes_[i].name]]++] = static_cast<uint32_t>(i);
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
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
