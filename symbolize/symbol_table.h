// The symbolizer's output: for each distinct code location, the frames it
// stands for (more than one when functions were inlined) and the module to show.
#ifndef PROFCPU_SYMBOLIZE_SYMBOL_TABLE_H_
#define PROFCPU_SYMBOLIZE_SYMBOL_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "symbolize/code_location.h"

namespace profcpu::symbolize {

struct Frame {
  std::string function;        // demangled name
  uint64_t offset = 0;         // from the symbol's start to the looked-up address
  bool inlined = false;        // an inlined call inside the next (outer) frame
  std::string source_file;     // empty when unknown
  uint32_t line = 0;           // 0 when unknown
};

// What an address resolved to. `frames` is innermost first; empty means the
// address could not be named and is shown as [unknown] in `module`.
struct Symbolization {
  std::string module;  // "/usr/lib/libc.so.6", "[kernel.kallsyms]", "/tmp/perf-42.map"
  std::vector<Frame> frames;
};

class SymbolTable {
 public:
  void Insert(const CodeLocation& location, Symbolization symbolization) {
    entries_.insert_or_assign(location, std::move(symbolization));
  }
  // nullptr when the location was never symbolized.
  const Symbolization* Find(const CodeLocation& location) const {
    auto it = entries_.find(location);
    return it == entries_.end() ? nullptr : &it->second;
  }
  size_t size() const { return entries_.size(); }
  const absl::flat_hash_map<CodeLocation, Symbolization>& entries() const { return entries_; }

 private:
  absl::flat_hash_map<CodeLocation, Symbolization> entries_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_SYMBOL_TABLE_H_
