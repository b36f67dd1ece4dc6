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
  std::vector<PageNode> nodes;  // [0] is the invisible root
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
