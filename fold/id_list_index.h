// Finds lists of ids (a stack as location ids, a folded stack as frame ids)
// by their contents, when the lists themselves are kept in a vector: the
// index holds positions in that vector, hashed and compared through it, so
// each list is stored once. Looked up by a span, with no list built for it.
#ifndef PROFCPU_FOLD_ID_LIST_INDEX_H_
#define PROFCPU_FOLD_ID_LIST_INDEX_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/types/span.h"

namespace profcpu::fold {

// An element that is itself the list.
struct WholeIdList {
  absl::Span<const uint32_t> operator()(const std::vector<uint32_t>& ids) const { return ids; }
};

// `IdsOf()(element)` gives an element's list.
template <typename Element, typename IdsOf = WholeIdList>
class IdListIndex {
 public:
  // Indexes positions in `*elements` (not owned; it must stay where it is,
  // and an element must not change while indexed).
  explicit IdListIndex(const std::vector<Element>* elements, size_t capacity = 0)
      : set_(capacity, Hash{elements}, Eq{elements}) {}

  // The position of the element whose list is `ids`, if indexed.
  std::optional<uint32_t> Find(absl::Span<const uint32_t> ids) const {
    const auto it = set_.find(ids);
    if (it == set_.end()) return std::nullopt;
    return *it;
  }
  // Indexes the element at `position` (its list must not be indexed yet).
  void Insert(uint32_t position) { set_.insert(position); }
  void Clear() { set_.clear(); }

 private:
  struct Hash {
    using is_transparent = void;
    const std::vector<Element>* elements;
    size_t operator()(absl::Span<const uint32_t> ids) const {
      return absl::Hash<absl::Span<const uint32_t>>()(ids);
    }
    size_t operator()(uint32_t position) const { return (*this)(IdsOf()((*elements)[position])); }
  };
  struct Eq {
    using is_transparent = void;
    const std::vector<Element>* elements;
    absl::Span<const uint32_t> Ids(uint32_t position) const {
      return IdsOf()((*elements)[position]);
    }
    absl::Span<const uint32_t> Ids(absl::Span<const uint32_t> ids) const { return ids; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Ids(a) == Ids(b);
    }
  };

  absl::flat_hash_set<uint32_t, Hash, Eq> set_;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_ID_LIST_INDEX_H_
