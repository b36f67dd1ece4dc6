#include "symbolize/address_space.h"

#include <sys/mman.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace profcpu::symbolize {

bool IsAnonymousMapping(absl::string_view filename) {
  // .NET 7+ runs JIT code from "/memfd:doublemapper (deleted)" (W^X); V8 and
  // CoreCLR without W^X from "//anon"; perf names unnamed memory "//anon".
  return filename.empty() || absl::StartsWith(filename, "//anon") ||
         absl::StartsWith(filename, "/memfd:") || absl::StartsWith(filename, "[anon") ||
         filename == "[heap]" || absl::StartsWith(filename, "[stack") ||
         absl::StartsWith(filename, "/dev/zero") || absl::StartsWith(filename, "/SYSV");
}

bool IsManagedImageMapping(absl::string_view filename) {
  absl::ConsumeSuffix(&filename, " (deleted)");
  return absl::EndsWithIgnoreCase(filename, ".dll");
}

absl::string_view AddressSpaceTracker::InternName(const std::string& name) {
  auto [it, inserted] = names_.try_emplace(name);
  if (inserted) it->second = std::make_unique<std::string>(name);
  return *it->second;
}

int64_t AddressSpaceTracker::InternModule(const recording::Mmap& mmap) {
  std::string key = absl::StrCat(mmap.dev_major, ":", mmap.dev_minor, ":", mmap.inode, ":",
                                 mmap.filename);
  auto [it, inserted] = module_ids_.try_emplace(key, static_cast<int64_t>(modules_.size()));
  if (inserted) {
    Module module;
    module.path = mmap.filename;
    module.dev_major = mmap.dev_major;
    module.dev_minor = mmap.dev_minor;
    module.inode = mmap.inode;
    module.build_id = mmap.build_id;
    module.example_pid = mmap.pid;
    modules_.push_back(std::move(module));
  } else if (modules_[it->second].build_id.empty() && !mmap.build_id.empty()) {
    modules_[it->second].build_id = mmap.build_id;
  }
  return it->second;
}

void AddressSpaceTracker::OnMmap(const recording::Mmap& mmap) {
  if (mmap.length == 0 || mmap.start + mmap.length < mmap.start) return;  // hostile/corrupt
  // Only executable mappings hold code; the collector asks for data mmaps only
  // when needed, so treat a record without PROT bits (old kernels) as code.
  if (mmap.prot != 0 && (mmap.prot & PROT_EXEC) == 0) return;
  generations_[mmap.pid] = ++changes_;
  Space& space = spaces_[mmap.pid];
  uint64_t start = mmap.start;
  uint64_t end = mmap.start + mmap.length;

  // A new mapping replaces whatever it overlaps, as mmap(MAP_FIXED) does.
  auto it = space.upper_bound(start);
  if (it != space.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > start) {
      Mapping tail = prev->second;
      uint64_t prev_start = prev->first;
      prev->second.end = start;
      if (tail.end > end) {  // the old mapping continues after the new one
        tail.file_offset += end - prev_start;
        space.emplace(end, tail);
      }
    }
  }
  it = space.lower_bound(start);
  while (it != space.end() && it->first < end) {
    if (it->second.end > end) {
      Mapping tail = it->second;
      tail.file_offset += end - it->first;
      space.erase(it);
      space.emplace(end, tail);
      break;
    }
    it = space.erase(it);
  }

  Mapping mapping;
  mapping.end = end;
  mapping.file_offset = mmap.file_offset;
  mapping.name = InternName(mmap.filename);
  if (!IsAnonymousMapping(mmap.filename) && !IsManagedImageMapping(mmap.filename)) {
    mapping.module = InternModule(mmap);
  }
  space.insert_or_assign(start, mapping);
}

void AddressSpaceTracker::OnFork(const recording::Fork& fork) {
  // A new thread shares its process's space; a new process starts as a copy.
  if (fork.pid == fork.ppid) return;
  auto parent = spaces_.find(fork.ppid);
  if (parent == spaces_.end()) return;
  Space copy = parent->second;
  spaces_.insert_or_assign(fork.pid, std::move(copy));
  generations_[fork.pid] = ++changes_;
}

void AddressSpaceTracker::OnComm(const recording::Comm& comm) {
  // exec replaces the whole address space; the new image's mmaps follow.
  if (comm.exec) {
    spaces_.erase(comm.pid);
    generations_[comm.pid] = ++changes_;
  }
}

std::optional<MappingView> AddressSpaceTracker::FindMapping(uint32_t pid,
                                                            uint64_t address) const {
  auto space = spaces_.find(pid);
  if (space == spaces_.end()) return std::nullopt;
  auto it = space->second.upper_bound(address);
  if (it == space->second.begin()) return std::nullopt;
  --it;
  if (address >= it->second.end) return std::nullopt;
  return MappingView{it->first, it->second.end, it->second.file_offset, it->second.module,
                     it->second.name};
}

uint64_t AddressSpaceTracker::Generation(uint32_t pid) const {
  auto it = generations_.find(pid);
  return it == generations_.end() ? 0 : it->second;
}

NormalizedAddress AddressSpaceTracker::Normalize(uint32_t pid, uint64_t address,
                                                 bool kernel) const {
  if (kernel) return {{CodeKind::kKernel, 0, address}, "[kernel.kallsyms]"};
  NormalizedAddress result{{CodeKind::kProcess, pid, address}, ""};
  auto space = spaces_.find(pid);
  if (space == spaces_.end()) return result;
  auto it = space->second.upper_bound(address);
  if (it == space->second.begin()) return result;
  --it;
  const Mapping& mapping = it->second;
  if (address >= mapping.end) return result;
  result.mapping_name = mapping.name;
  result.mapping_start = it->first;
  result.mapping_end = mapping.end;
  if (mapping.module >= 0) {
    result.location = {CodeKind::kNative, static_cast<uint32_t>(mapping.module),
                       address - it->first + mapping.file_offset};
  }
  return result;
}

}  // namespace profcpu::symbolize
