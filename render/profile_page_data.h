// What profile.html shows, taken from a Profile: every sample in time order
// as (time, leaf node of a stack tree, thread, weight), the tree's frames
// named exactly as folded_stacks.out and flamegraph.svg name them, and each
// name's colours in the run's palette. docs/profile-page.md gives the format
// the writer encodes it in.
#ifndef PROFCPU_RENDER_PROFILE_PAGE_DATA_H_
#define PROFCPU_RENDER_PROFILE_PAGE_DATA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fold/folded_writer.h"
#include "fold/profile.h"
#include "render/palette.h"

namespace profcpu::render {

// Name flags (docs/profile-page.md).
inline constexpr uint8_t kPageNameIdle = 1;     // a kernel idle-loop function
inline constexpr uint8_t kPageNameKernel = 2;   // kernel code
inline constexpr uint8_t kPageNameJit = 4;      // JIT code (/tmp/perf-N.map, jitdump)
inline constexpr uint8_t kPageNameProcess = 8;  // a process root (the comm)

struct PageName {
  std::string text;  // clean UTF-8, annotation ("_[k]") stripped
  Rgb color;         // in the run's palette, as flamegraph.svg colours it
  Rgb cool;          // under the cool subtree (wall mode's [off-cpu])
  uint8_t flags = 0;
};

struct PageNode {
  uint32_t parent = 0;
  uint32_t name = 0;
};

// Name ids of the tree's nodes: 2 bytes each while every id is below
// 65,536 (a run has thousands of names, its deep stacks tens of millions of
// nodes), else 4.
class PageNameIds {
 public:
  explicit PageNameIds(bool wide = false) : wide_(wide) {}
  size_t size() const { return wide_ ? wide_names_.size() : narrow_names_.size(); }
  bool empty() const { return size() == 0; }
  uint32_t operator[](size_t i) const { return wide_ ? wide_names_[i] : narrow_names_[i]; }
  void reserve(size_t n) { wide_ ? wide_names_.reserve(n) : narrow_names_.reserve(n); }
  void push_back(uint32_t name) {
    if (!wide_ && name > 0xffff) Widen();
    if (wide_) {
      wide_names_.push_back(name);
    } else {
      narrow_names_.push_back(static_cast<uint16_t>(name));
    }
  }
  // Appends ids [begin, end) of `from`.
  void Append(const PageNameIds& from, size_t begin, size_t end);

 private:
  void Widen();
  bool wide_;
  std::vector<uint16_t> narrow_names_;
  std::vector<uint32_t> wide_names_;
};

// The tree's nodes, each after its parent, held as names alone where the
// parent is the node before (a stack's new frames are numbered one under
// the other) and as a jump elsewhere: on deep, distinct stacks tens of
// millions of nodes at 2 or 4 bytes each instead of 8.
class PageNodes {
 public:
  // Where a node's parent is not the node before it.
  struct Jump {
    uint32_t node = 0;
    uint32_t parent = 0;
  };
  PageNodes() = default;
  // `jumps` by node; nodes 0 and those listed have the jump's parent (0
  // for the root if not listed), the others the node before.
  PageNodes(PageNameIds names, std::vector<Jump> jumps)
      : names_(std::move(names)), jumps_(std::move(jumps)) {}

  size_t size() const { return names_.size(); }
  bool empty() const { return names_.empty(); }
  void reserve(size_t nodes) { names_.reserve(nodes); }
  void push_back(const PageNode& node) {
    if (!names_.empty() && node.parent + size_t{1} != names_.size()) {
      jumps_.push_back({static_cast<uint32_t>(names_.size()), node.parent});
    }
    names_.push_back(node.name);
  }
  // By a binary search over the jumps: for tests and checks; in order,
  // ForEach.
  PageNode operator[](size_t i) const;
  // f(index, PageNode) for every node in order.
  template <typename F>
  void ForEach(F&& f) const {
    size_t jump = 0;
    for (size_t i = 0; i < names_.size(); ++i) {
      uint32_t parent = i == 0 ? 0 : static_cast<uint32_t>(i - 1);
      if (jump < jumps_.size() && jumps_[jump].node == i) parent = jumps_[jump++].parent;
      f(i, PageNode{parent, names_[i]});
    }
  }

 private:
  PageNameIds names_;
  std::vector<Jump> jumps_;  // by node
};

struct PageThread {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t name = 0;  // the thread's comm, a PageName id
};

struct PageSample {
  uint64_t time_us = 0;  // from time 0 (collection began)
  uint32_t node = 0;     // the stack's leaf
  uint32_t thread = 0;
  uint64_t weight = 1;
};

struct PageData {
  std::vector<PageName> names;
  PageNodes nodes;  // [0] is the invisible root
  std::vector<PageThread> threads;
  std::vector<PageSample> samples;  // by time
  bool weighted = false;            // weights other than 1 (periods)
  uint64_t total_weight = 0;
  uint64_t last_time_us = 0;
};

struct PageDataOptions {
  // Naming (annotations the palette needs), weights (weight_by_period) and
  // the event kept, as for the flame graph; pid/tid roots are ignored (the
  // page splits by thread itself).
  fold::FoldOptions fold;
  Palette palette = Palette::kHot;
  bool hash_colors = false;
  uint64_t start_ns = 0;  // time 0; earlier samples are put at 0
  // Threads the distinct stacks are sorted on (the tree's costliest step on
  // deep stacks); the data does not depend on it.
  size_t threads = 1;
};

PageData BuildPageData(const fold::Profile& profile, const PageDataOptions& options);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_PROFILE_PAGE_DATA_H_
