// Replays a recording's mapping records (MMAP2, FORK, COMM exec) to know, at
// each sample, what every process had mapped, and normalizes sampled addresses
// into CodeLocations. Pure bookkeeping: it opens no file.
#ifndef PROFCPU_SYMBOLIZE_ADDRESS_SPACE_H_
#define PROFCPU_SYMBOLIZE_ADDRESS_SPACE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "recording/records.h"
#include "symbolize/code_location.h"

namespace profcpu::symbolize {

// A normalized address plus what a symbolizer needs to name it if no symbol
// source knows it: the name of the mapping it fell in.
struct NormalizedAddress {
  CodeLocation location;
  absl::string_view mapping_name;  // "//anon", "[vdso]", "/usr/lib/x.so"; "" if unmapped
  // The mapping's bounds [start, end) in the process; both 0 if unmapped.
  uint64_t mapping_start = 0;
  uint64_t mapping_end = 0;
};

// A mapping as the replay knows it at the current record.
struct MappingView {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  uint64_t file_offset = 0;
  int64_t module = -1;  // index into modules(), -1 for anonymous/JIT memory
  absl::string_view name;
};

class AddressSpaceTracker {
 public:
  void OnMmap(const recording::Mmap& mmap);
  void OnFork(const recording::Fork& fork);
  void OnComm(const recording::Comm& comm);

  // `address` is the address to look up (already adjusted to point inside the
  // call instruction for return addresses).
  NormalizedAddress Normalize(uint32_t pid, uint64_t address, bool kernel) const;

  // The mapping of `pid` holding `address` now, if any (the DWARF unwinder
  // finds the file and load bias of each frame's code with it).
  std::optional<MappingView> FindMapping(uint32_t pid, uint64_t address) const;
  // Changes whenever `pid`'s mappings change (mmap, exec, fork), so a
  // consumer can tell its cached view is stale.
  uint64_t Generation(uint32_t pid) const;

  const std::vector<Module>& modules() const { return modules_; }

 private:
  struct Mapping {
    uint64_t end = 0;
    uint64_t file_offset = 0;
    int64_t module = -1;       // index into modules_, or -1 for anonymous/JIT memory
    absl::string_view name;     // interned in names_
  };
  using Space = std::map<uint64_t, Mapping>;  // keyed by start address

  int64_t InternModule(const recording::Mmap& mmap);
  absl::string_view InternName(const std::string& name);

  absl::flat_hash_map<uint32_t, Space> spaces_;
  absl::flat_hash_map<uint32_t, uint64_t> generations_;
  uint64_t changes_ = 0;
  std::vector<Module> modules_;
  absl::flat_hash_map<std::string, int64_t> module_ids_;  // key: dev:ino:path
  absl::flat_hash_map<std::string, std::unique_ptr<std::string>> names_;
};

// True for mappings whose contents are not a file we can symbolize from:
// anonymous memory, JIT double-mapped memfds, heap and stack.
bool IsAnonymousMapping(absl::string_view filename);

// True for a mapping of a .NET assembly image (NAME.dll, any case): not ELF,
// its precompiled (ReadyToRun) code is named by the runtime's jitdump
// ([PreJIT] records) by address, so such addresses stay per process
// (kProcess) like JIT code rather than (module, offset).
bool IsManagedImageMapping(absl::string_view filename);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_ADDRESS_SPACE_H_
