#include "fold/folded_writer_order.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/timed_tasks.h"

namespace profcpu::fold {
namespace {

// The text of frames[i...], joined.
std::string TextFrom(const std::vector<uint32_t>& frames, size_t i,
                     const std::vector<std::string>& names) {
  std::string text;
  for (size_t first = i; i < frames.size(); ++i) {
    absl::StrAppend(&text, i == first ? "" : ";", names[frames[i]]);
  }
  return text;
}

// The order of joined texts when some name (a comm) holds ';': a frame is
// then no token of its own, so where such a name decides, the texts are
// compared. Otherwise, as JoinedTextOrder without its ranks: the first frame
// that differs decides, compared as the name followed by what comes after it
// in the text (';' if more frames follow, the end of the text otherwise).
bool JoinedTextLess(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                    const std::vector<std::string>& names,
                    const std::vector<bool>& has_semicolon) {
  const size_t common = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < common && a[i] == b[i]) ++i;
  if (i == common) return a.size() < b.size();  // a prefix sorts first
  if (has_semicolon[a[i]] || has_semicolon[b[i]]) {
    return TextFrom(a, i, names) < TextFrom(b, i, names);
  }
  const absl::string_view x = names[a[i]], y = names[b[i]];
  const size_t bytes = std::min(x.size(), y.size());
  if (bytes > 0) {
    const int order = std::memcmp(x.data(), y.data(), bytes);
    if (order != 0) return order < 0;
  }
  // One name is a prefix of the other (they differ, so not equal): the
  // shorter one is followed by ';' or by the end of its text.
  if (x.size() < y.size()) {
    return i + 1 == a.size() || static_cast<unsigned char>(y[bytes]) > ';';
  }
  return i + 1 != b.size() && static_cast<unsigned char>(x[bytes]) < ';';
}

}  // namespace

JoinedTextOrder::JoinedTextOrder(const std::vector<std::string>& names) {
  std::vector<std::string> tokens;
  tokens.reserve(2 * names.size());
  for (const std::string& name : names) {
    tokens.push_back(absl::StrCat(name, ";"));
    tokens.push_back(name);
  }
  std::vector<uint32_t> by_text(tokens.size());
  std::iota(by_text.begin(), by_text.end(), 0);
  std::sort(by_text.begin(), by_text.end(),
            [&tokens](uint32_t x, uint32_t y) { return tokens[x] < tokens[y]; });
  ranks_.resize(tokens.size());
  for (size_t rank = 0; rank < by_text.size(); ++rank) {
    ranks_[by_text[rank]] = static_cast<uint32_t>(rank);
  }
}

namespace {

// Below this many stacks a bucket is not worth a task of its own.
constexpr size_t kMinStacksPerBucket = 8192;

// Sample sort: splitters taken from a regular sample cut the stacks into
// about equal buckets, in order; each bucket is then sorted on its own. Every
// step splits (finding each stack's bucket, moving it there, sorting the
// buckets): unlike sorted runs merged pairwise, nothing waits on a last merge
// over all the stacks.
template <typename Less>
double SampleSort(std::vector<FoldedStack>* stacks, const Less& less, size_t threads,
                base::ParallelStage* stage) {
  const size_t n = stacks->size();
  const size_t buckets = std::min(threads, n / kMinStacksPerBucket);
  if (buckets <= 1) {
    std::sort(stacks->begin(), stacks->end(), less);
    return 0;
  }
  const std::vector<FoldedStack>& in = *stacks;
  std::vector<uint32_t> sample;
  const size_t sample_size = 64 * buckets;
  for (size_t i = 0; i < sample_size; ++i) sample.push_back(static_cast<uint32_t>(n * i / sample_size));
  std::sort(sample.begin(), sample.end(),
            [&](uint32_t a, uint32_t b) { return less(in[a], in[b]); });
  std::vector<uint32_t> splitters;  // bucket b holds stacks below splitters[b], at or above [b-1]
  for (size_t b = 1; b < buckets; ++b) splitters.push_back(sample[sample_size * b / buckets]);

  // Each slice of the input counts its stacks per bucket, then moves them
  // to its place in each bucket.
  const size_t slices = buckets;
  std::vector<uint16_t> bucket_of(n);
  std::vector<size_t> counts(slices * buckets);
  auto slice_begin = [n, slices](size_t slice) { return n * slice / slices; };
  double own_cpu = base::RunTimedTasks(slices, threads, [&](size_t slice) {
    for (size_t i = slice_begin(slice); i < slice_begin(slice + 1); ++i) {
      const auto after = std::upper_bound(
          splitters.begin(), splitters.end(), i,
          [&](size_t x, uint32_t splitter) { return less(in[x], in[splitter]); });
      bucket_of[i] = static_cast<uint16_t>(after - splitters.begin());
      ++counts[slice * buckets + bucket_of[i]];
    }
  }, stage);
  std::vector<size_t> bucket_begin(buckets + 1);
  std::vector<size_t> next(slices * buckets);  // where slice s puts its next stack of bucket b
  size_t at = 0;
  for (size_t b = 0; b < buckets; ++b) {
    bucket_begin[b] = at;
    for (size_t slice = 0; slice < slices; ++slice) {
      next[slice * buckets + b] = at;
      at += counts[slice * buckets + b];
    }
  }
  bucket_begin[buckets] = at;
  std::vector<FoldedStack> out(n);
  own_cpu += base::RunTimedTasks(slices, threads, [&](size_t slice) {
    for (size_t i = slice_begin(slice); i < slice_begin(slice + 1); ++i) {
      out[next[slice * buckets + bucket_of[i]]++] = std::move((*stacks)[i]);
    }
  }, stage);
  own_cpu += base::RunTimedTasks(buckets, threads, [&](size_t b) {
    std::sort(out.begin() + bucket_begin[b], out.begin() + bucket_begin[b + 1], less);
  }, stage);
  *stacks = std::move(out);
  return own_cpu;
}

}  // namespace

double SortByJoinedText(const std::vector<std::string>& names, std::vector<FoldedStack>* stacks,
                        int threads, base::ParallelStage* stage) {
  base::ParallelStage ignored;
  if (stage == nullptr) stage = &ignored;
  std::vector<bool> has_semicolon(names.size());
  bool any_semicolon = false;
  for (size_t i = 0; i < names.size(); ++i) {
    has_semicolon[i] = absl::StrContains(names[i], ';');
    any_semicolon = any_semicolon || has_semicolon[i];
  }
  const size_t sort_threads = static_cast<size_t>(std::max(threads, 1));
  if (any_semicolon) {
    return SampleSort(
        stacks,
        [&](const FoldedStack& a, const FoldedStack& b) {
          return JoinedTextLess(a.frames, b.frames, names, has_semicolon);
        },
        sort_threads, stage);
  }
  const JoinedTextOrder order(names);
  return SampleSort(
      stacks,
      [&order](const FoldedStack& a, const FoldedStack& b) { return order.Less(a.frames, b.frames); },
      sort_threads, stage);
}

}  // namespace profcpu::fold
