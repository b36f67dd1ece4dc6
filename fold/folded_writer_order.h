// The order folded stacks are printed in: by their joined text ("a;b;c"),
// bytewise, as stackcollapse sorts. Deep, distinct stacks spend most of the
// folding's sort comparing, so the order is decided on interned frame ids,
// never on the texts: see JoinedTextOrder.
#ifndef PROFCPU_FOLD_FOLDED_WRITER_ORDER_H_
#define PROFCPU_FOLD_FOLDED_WRITER_ORDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/stage_times.h"
#include "fold/folded_profile.h"

namespace profcpu::fold {

// Compares frame lists by their joined text with two table look-ups past
// their common prefix of ids. A text is a sequence of tokens: each frame's
// name followed by ';', the last one's by nothing. Since names hold no ';',
// the texts compare as their token sequences (the first tokens that differ
// decide, compared as strings; no token is a prefix of another one that
// ends in ';'), so each token gets its rank among all of them once.
// Only for name tables with no ';' in any name (a comm may hold one).
class JoinedTextOrder {
 public:
  explicit JoinedTextOrder(const std::vector<std::string>& names);

  bool Less(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) const {
    const size_t common = a.size() < b.size() ? a.size() : b.size();
    size_t i = 0;
    while (i < common && a[i] == b[i]) ++i;
    if (i == common) return a.size() < b.size();  // a prefix sorts first
    return Rank(a[i], i + 1 == a.size()) < Rank(b[i], i + 1 == b.size());
  }

 private:
  uint32_t Rank(uint32_t id, bool last) const { return ranks_[2 * size_t{id} + (last ? 1 : 0)]; }

  // [2 id]: the name followed by ';'; [2 id + 1]: the name ending the text.
  std::vector<uint32_t> ranks_;
};

// Sorts `stacks` (frames naming into `names`) by their joined text, on up
// to `threads` threads. Not stable: stacks that join into the same text
// end up side by side, in no given order. Adds its tasks, if it split, to
// `stage`; returns the calling thread's CPU seconds in them.
double SortByJoinedText(const std::vector<std::string>& names, std::vector<FoldedStack>* stacks,
                        int threads, base::ParallelStage* stage = nullptr);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_FOLDED_WRITER_ORDER_H_
