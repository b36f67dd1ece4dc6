// The Profile: every sample's stack as interned code locations, with the
// symbol table that names them. Built from a recording (profile_builder.h) or
// read from perf script text (perf_script_reader.h); written as folded stacks
// and perf script text; rendered via FoldedProfile.
#ifndef PROFCPU_FOLD_PROFILE_H_
#define PROFCPU_FOLD_PROFILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "fold/id_list_index.h"
#include "symbolize/code_location.h"
#include "symbolize/symbol_table.h"

namespace profcpu::fold {

// One stack entry: where the sample's call chain pointed.
struct Location {
  uint64_t address = 0;            // as sampled (a return address for callers)
  symbolize::CodeLocation code;    // what the symbol table is keyed by
  // Added to each frame's offset when printing: the symbolizer looked up
  // address-1 for return addresses so calls at a function's end name the caller.
  uint8_t offset_adjust = 0;
  bool kernel = false;
  // The user-space mapping the address fell in, [start, end), as the replay
  // saw it; 0, 0 for kernel code, imported text and addresses no mapping
  // covered (a frame-pointer walk through code without frame pointers reads
  // garbage). Not part of the location's identity.
  uint64_t mapping_start = 0;
  uint64_t mapping_end = 0;
};

struct Sample {
  uint64_t time_ns = 0;   // CLOCK_MONOTONIC
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  uint32_t comm = 0;      // index into strings
  uint32_t event = 0;     // index into strings
  uint32_t stack = 0;     // index into stacks
};

class Profile {
 public:
  Profile() = default;
  // Copies rebuild the stack index (it points into the stacks it indexes);
  // a moved-from Profile is empty. Every member must be in these.
  Profile(Profile&& other) noexcept { *this = std::move(other); }
  Profile& operator=(Profile&& other) noexcept;
  Profile(const Profile& other) { *this = other; }
  Profile& operator=(const Profile& other);

  uint32_t InternString(absl::string_view s);
  // Locations are interned by (code, address, adjust, kernel).
  uint32_t InternLocation(const Location& location);
  // A stack is location ids, leaf first (as perf prints it).
  uint32_t InternStack(const std::vector<uint32_t>& location_ids);
  // The same, keeping `location_ids` itself when the stack is new (no copy:
  // the parallel replay's merge hands over every slice's stacks).
  uint32_t InternStack(std::vector<uint32_t>&& location_ids);
  // The distinct stacks, moved out (the profile has none left; its samples
  // still name them by position).
  std::vector<std::vector<uint32_t>> TakeStacks();
  void AddSample(const Sample& sample) { samples_.push_back(sample); }

  const std::string& string(uint32_t id) const { return strings_[id]; }
  const Location& location(uint32_t id) const { return locations_[id]; }
  const std::vector<uint32_t>& stack(uint32_t id) const { return stacks_->stacks[id]; }
  const std::vector<Sample>& samples() const { return samples_; }
  std::vector<Sample>& mutable_samples() { return samples_; }
  size_t location_count() const { return locations_.size(); }
  size_t stack_count() const { return stacks_->stacks.size(); }

  // The names of the locations, given whole by the symbolize stage (or
  // filled by a reader of perf script text, which names as it reads).
  const symbolize::SymbolTable& symbols() const { return symbols_; }
  void SetSymbols(symbolize::SymbolTable symbols) { symbols_ = std::move(symbols); }
  symbolize::SymbolTable& mutable_symbols() { return symbols_; }
  // The modules native locations' `space` indexes (from the replay, with
  // what symbolizing learned: build-ids), for exports that list mappings.
  const std::vector<symbolize::Module>& modules() const { return modules_; }
  void SetModules(std::vector<symbolize::Module> modules) { modules_ = std::move(modules); }

 private:
  std::vector<std::string> strings_;
  absl::flat_hash_map<std::string, uint32_t> string_ids_;
  std::vector<Location> locations_;
  absl::flat_hash_map<std::tuple<symbolize::CodeLocation, uint64_t, uint8_t, bool>, uint32_t>
      location_ids_;
  // Distinct stacks, found by their locations (each held once). On the
  // heap, so the index's view of `stacks` survives moving the Profile.
  struct StackStore {
    StackStore() : ids(&stacks) {}
    std::vector<std::vector<uint32_t>> stacks;
    IdListIndex<std::vector<uint32_t>> ids;
  };
  std::unique_ptr<StackStore> stacks_ = std::make_unique<StackStore>();
  std::vector<Sample> samples_;
  symbolize::SymbolTable symbols_;
  std::vector<symbolize::Module> modules_;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PROFILE_H_
