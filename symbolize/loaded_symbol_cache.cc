#include "symbolize/loaded_symbol_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/module_symbols.h"

namespace profcpu::symbolize {
namespace {

// Bytes compared at the start and at the end of what was read of a perf map
// to tell the same map grown from a map written anew.
constexpr size_t kPerfMapProbeBytes = 256;
// /proc/modules is a few KB; /proc/PID/stat a few hundred bytes.
constexpr size_t kMaxModulesListBytes = size_t{4} << 20;
constexpr size_t kMaxStatBytes = 4096;
// What an entry costs beside its contents (key, list node, map slot).
constexpr uint64_t kEntryOverhead = 256;

uint64_t Nanoseconds(const struct timespec& ts) {
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// The bytes of `fd` at [offset, offset + size), or "" when they cannot all
// be read.
std::string ReadBytesAt(int fd, uint64_t offset, size_t size) {
  std::string out(size, '\0');
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    done += static_cast<size_t>(n);
  }
  return out;
}

// The kernel's modules by name and load address: what moves kernel symbols.
// (The other fields, reference counts above all, change all the time.)
std::string ModulesFingerprint(const std::string& path) {
  absl::StatusOr<std::string> text =
      base::ReadFileBounded(path, kMaxModulesListBytes, /*truncate_ok=*/true);
  if (!text.ok()) return "";
  std::string out;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.empty()) continue;
    absl::StrAppend(&out, fields.front(), " ", fields.back(), "\n");
  }
  return out;
}

}  // namespace

struct LoadedSymbolCache::Entry {
  std::string key;
  std::string description;  // for Describe
  uint64_t bytes = 0;
  uint64_t last_run = 0;
  // A module file (key "m:..."): its symbols, or why it has none.
  std::shared_ptr<ModuleSymbolizer> symbolizer;
  absl::Status status;
  std::vector<std::string> warnings;
  // A process's perf map (key "p:PID").
  uint32_t pid = 0;
  uint64_t start_time = 0;
  std::shared_ptr<PerfMap> perf_map;
  std::string head, tail;  // the file's bytes around what was read, to compare

  bool is_perf_map() const { return perf_map != nullptr; }
  uint64_t Estimate() const {
    uint64_t total = kEntryOverhead + key.size() + head.size() + tail.size();
    for (const std::string& w : warnings) total += w.size();
    if (symbolizer != nullptr) total += symbolizer->EstimatedBytes();
    if (perf_map != nullptr) total += perf_map->EstimatedBytes();
    return total;
  }
};

struct LoadedSymbolCache::KallsymsState {
  std::string path;
  std::string modules;  // ModulesFingerprint at load
  absl::Time loaded_at;
  absl::StatusOr<std::shared_ptr<const Kallsyms>> table = absl::UnknownError("not loaded");
  uint64_t bytes = 0;
};

LoadedSymbolCache::LoadedSymbolCache(LoadedSymbolCacheOptions options)
    : options_(std::move(options)) {}

LoadedSymbolCache::~LoadedSymbolCache() = default;

LoadedSymbolCache::Lru::iterator LoadedSymbolCache::Find(const std::string& key) {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? lru_.end() : it->second;
}

void LoadedSymbolCache::Touch(Lru::iterator it) {
  it->last_run = run_;
  lru_.splice(lru_.begin(), lru_, it);
}

LoadedSymbolCache::Lru::iterator LoadedSymbolCache::Insert(std::string key, Entry entry) {
  auto old = Find(key);
  if (old != lru_.end()) Erase(old);
  entry.key = std::move(key);
  entry.last_run = run_;
  entry.bytes = entry.Estimate();
  stats_.bytes += entry.bytes;
  lru_.push_front(std::move(entry));
  by_key_[lru_.front().key] = lru_.begin();
  ++stats_.entries;
  EvictToCaps();
  return lru_.begin();
}

void LoadedSymbolCache::Erase(Lru::iterator it) {
  stats_.bytes -= it->bytes;
  --stats_.entries;
  by_key_.erase(it->key);
  lru_.erase(it);
}

void LoadedSymbolCache::EvictToCaps() {
  // Least recently used first, never what the current run has used: a run
  // needs its modules again for its other addresses.
  while (!lru_.empty() &&
         (stats_.bytes > options_.max_bytes || stats_.entries > options_.max_entries)) {
    auto last = std::prev(lru_.end());
    if (last->last_run == run_) break;
    Erase(last);
    ++stats_.evicted;
  }
}

uint64_t LoadedSymbolCache::StartTime(uint32_t pid) const {
  absl::StatusOr<std::string> stat = base::ReadFileBounded(
      absl::StrCat(options_.proc_dir, "/", pid, "/stat"), kMaxStatBytes, /*truncate_ok=*/true);
  if (!stat.ok()) return 0;
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so
  // fields are counted after the last ')'; starttime is field 22 (proc(5)).
  const size_t paren = stat->rfind(')');
  if (paren == std::string::npos) return 0;
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(*stat).substr(paren + 1), ' ', absl::SkipEmpty());
  uint64_t start = 0;
  if (fields.size() < 20 || !absl::SimpleAtoi(fields[19], &start)) return 0;
  return start == 0 ? 1 : start;  // 0 means "gone" here
}

absl::StatusOr<SharedModule> LoadedSymbolCache::LoadModule(
    const Module& module, const base::RootDir* target_root,
    const std::vector<DebugSearchRoot>& debug_roots, const ModuleSymbolizerLimits& limits) {
  auto uncached = [&]() -> absl::StatusOr<SharedModule> {
    ++stats_.module_uncached;
    absl::StatusOr<LoadedModule> loaded = LoadModuleSymbolizer(module, target_root, debug_roots, limits);
    if (!loaded.ok()) return loaded.status();
    return SharedModule{std::move(loaded->symbolizer), std::move(loaded->warnings)};
  };
  if (target_root == nullptr) return uncached();
  absl::string_view path = module.path;
  absl::ConsumeSuffix(&path, kDeletedSuffix);
  absl::StatusOr<base::UniqueFd> fd = target_root->OpenFile(std::string(path));
  struct stat st;
  if (!fd.ok() || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) return uncached();
  const std::string build_id = ElfSymbols::ReadBuildIdNote(fd->get());
  // A file that is not the one mapped (by build-id) is looked up by the
  // mapping's build-id: that is no file identity, so no caching.
  if (!module.build_id.empty() && module.build_id != build_id) return uncached();
  const std::string key =
      build_id.empty()
          ? absl::StrCat("m:s:", st.st_dev, ":", st.st_ino, ":", st.st_size, ":",
                         Nanoseconds(st.st_mtim), ":", Nanoseconds(st.st_ctim))
          : absl::StrCat("m:b:", absl::BytesToHexString(build_id), ":", st.st_size);
  if (build_id.empty() &&
      absl::Now() - absl::TimeFromTimespec(st.st_ctim) < options_.min_file_age) {
    return uncached();
  }
  // Whether this file is the one mapped is a question about this module.
  const std::string change = MappedFileChange(module, build_id, static_cast<uint64_t>(st.st_ino));

  auto it = Find(key);
  if (it != lru_.end()) {
    ++stats_.module_hits;
    Touch(it);
  } else {
    ++stats_.module_loads;
    Module file = module;
    file.inode = static_cast<uint64_t>(st.st_ino);  // the identity warning is `change`
    absl::StatusOr<LoadedModule> loaded = LoadModuleSymbolizer(file, target_root, debug_roots, limits);
    Entry entry;
    if (loaded.ok()) {
      if (!build_id.empty() && loaded->symbolizer->build_id() != build_id) {
        // Replaced between the two opens: use it, but keep nothing.
        std::vector<std::string> warnings = std::move(loaded->warnings);
        if (!change.empty()) warnings.insert(warnings.begin(), change);
        return SharedModule{std::move(loaded->symbolizer), std::move(warnings)};
      }
      entry.symbolizer = std::move(loaded->symbolizer);
      entry.warnings = std::move(loaded->warnings);
    } else {
      entry.status = loaded.status();
    }
    entry.description = absl::StrCat(
        "module ", path, build_id.empty() ? "" : absl::StrCat(" (build-id ",
                                                              absl::BytesToHexString(build_id), ")"),
        entry.status.ok() ? "" : " (failed)");
    it = Insert(key, std::move(entry));
  }
  if (!it->status.ok()) return it->status;
  SharedModule out{it->symbolizer, it->warnings};
  if (!change.empty()) out.warnings.insert(out.warnings.begin(), change);
  return out;
}

absl::StatusOr<std::shared_ptr<const Kallsyms>> LoadedSymbolCache::LoadKallsyms(
    const std::string& path) {
  const std::string modules = ModulesFingerprint(options_.modules_path);
  const absl::Time now = absl::Now();
  KallsymsState* k = kallsyms_.get();
  if (k != nullptr && k->path == path && k->modules == modules &&
      now - k->loaded_at < options_.kallsyms_max_age) {
    ++stats_.kallsyms_hits;
    return k->table;
  }
  ++stats_.kallsyms_loads;
  if (k != nullptr) {
    stats_.bytes -= k->bytes;
  } else {
    ++stats_.entries;
  }
  kallsyms_ = std::make_unique<KallsymsState>();
  k = kallsyms_.get();
  k->path = path;
  k->modules = modules;
  k->loaded_at = now;
  absl::StatusOr<Kallsyms> loaded = Kallsyms::Load(path);
  if (loaded.ok()) {
    k->table = std::make_shared<const Kallsyms>(std::move(*loaded));
    k->bytes = (*k->table)->EstimatedBytes();
  } else {
    k->table = loaded.status();
    k->bytes = kEntryOverhead;
  }
  stats_.bytes += k->bytes;
  EvictToCaps();
  return k->table;
}

absl::StatusOr<std::shared_ptr<const PerfMap>> LoadedSymbolCache::ReadPerfMap(
    uint32_t pid, int fd, absl::string_view what) {
  const uint64_t start_time = StartTime(pid);
  auto read_whole = [&]() -> absl::StatusOr<std::shared_ptr<PerfMap>> {
    ++stats_.perf_maps_read;
    absl::StatusOr<PerfMap> map = PerfMap::Read(fd, what);
    if (!map.ok()) return map.status();
    stats_.perf_map_bytes += map->stats().bytes;
    return std::make_shared<PerfMap>(std::move(*map));
  };
  if (start_time == 0) {
    // Gone already (or never seen): nothing to key a later run's read by.
    absl::StatusOr<std::shared_ptr<PerfMap>> map = read_whole();
    if (!map.ok()) return map.status();
    return std::shared_ptr<const PerfMap>(std::move(*map));
  }
  const std::string key = absl::StrCat("p:", pid);
  auto it = Find(key);
  struct stat st;
  bool continued = false;
  if (it != lru_.end() && it->start_time == start_time && ::fstat(fd, &st) == 0) {
    const uint64_t read = it->perf_map->complete_bytes();
    const bool same = static_cast<uint64_t>(st.st_size) >= read &&
                      ReadBytesAt(fd, 0, it->head.size()) == it->head &&
                      ReadBytesAt(fd, read - it->tail.size(), it->tail.size()) == it->tail;
    if (same && ::lseek(fd, static_cast<off_t>(read), SEEK_SET) == static_cast<off_t>(read)) {
      const uint64_t before = read;
      if (it->perf_map->Continue(fd, what).ok()) {
        ++stats_.perf_maps_continued;
        stats_.perf_map_bytes += it->perf_map->stats().bytes - before;
        continued = true;
      }
    }
  }
  if (!continued) {
    if (it != lru_.end()) Erase(it);
    if (::lseek(fd, 0, SEEK_SET) != 0) return base::ErrnoStatus(errno, absl::StrCat("seek ", what));
    absl::StatusOr<std::shared_ptr<PerfMap>> map = read_whole();
    if (!map.ok()) return map.status();
    Entry entry;
    entry.pid = pid;
    entry.start_time = start_time;
    entry.perf_map = std::move(*map);
    entry.description = absl::StrCat("perf map of pid ", pid);
    it = Insert(key, std::move(entry));
  }
  // What the next run compares: the first bytes read and the last ones.
  const uint64_t read = it->perf_map->complete_bytes();
  const size_t probe = static_cast<size_t>(std::min<uint64_t>(read, kPerfMapProbeBytes));
  it->head = ReadBytesAt(fd, 0, probe);
  it->tail = ReadBytesAt(fd, read - probe, probe);
  Touch(it);
  stats_.bytes -= it->bytes;
  it->bytes = it->Estimate();
  stats_.bytes += it->bytes;
  return std::shared_ptr<const PerfMap>(it->perf_map);
}

std::vector<std::pair<std::string, uint64_t>> LoadedSymbolCache::Describe() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  if (kallsyms_ != nullptr) out.emplace_back("kallsyms " + kallsyms_->path, kallsyms_->bytes);
  for (const Entry& entry : lru_) out.emplace_back(entry.description, entry.bytes);
  return out;
}

void LoadedSymbolCache::EndRun() {
  absl::flat_hash_set<uint32_t> pids;
  for (const Entry& entry : lru_) {
    if (entry.is_perf_map()) pids.insert(entry.pid);
  }
  EndRun(pids);  // drops those whose start time changed or who are gone
}

void LoadedSymbolCache::EndRun(const absl::flat_hash_set<uint32_t>& live_pids) {
  const uint64_t finished = run_;
  ++run_;
  ++stats_.runs;
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    if (it->is_perf_map()) {
      if (!live_pids.contains(it->pid) || StartTime(it->pid) != it->start_time) {
        Erase(it);
        ++stats_.dropped_exited;
      }
    } else if (run_ - it->last_run > options_.max_idle_runs) {
      Erase(it);
      ++stats_.dropped_idle;
    } else if (it->last_run == finished) {
      // DWARF indexes grew with the run's lookups.
      stats_.bytes -= it->bytes;
      it->bytes = it->Estimate();
      stats_.bytes += it->bytes;
    }
    it = next;
  }
  EvictToCaps();
}

}  // namespace profcpu::symbolize
