#include "symbolize/jit_sources.h"

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/file_io.h"
#include "base/jit_mapping.h"
#include "symbolize/address_space.h"
#include "symbolize/dotnet_names.h"
#include "symbolize/loaded_symbol_cache.h"

namespace profcpu::symbolize {
namespace {

constexpr size_t kMaxPerfInfoBytes = 64 << 20;

// "jit-1234.dump": the name every runtime gives its jitdump
// (jitdump-specification.txt: "jit-<pid>.dump", the file perf inject finds).
bool IsJitdumpName(absl::string_view filename) {
  absl::string_view base = base::BaseName(filename);
  if (!absl::ConsumePrefix(&base, "jit-") || !absl::ConsumeSuffix(&base, ".dump")) return false;
  return !base.empty() && base.find_first_not_of("0123456789") == absl::string_view::npos;
}

absl::StatusOr<std::shared_ptr<const PerfMap>> ReadPerfMap(int fd, absl::string_view what) {
  absl::StatusOr<PerfMap> map = PerfMap::Read(fd, what);
  if (!map.ok()) return map.status();
  return std::make_shared<const PerfMap>(std::move(*map));
}

}  // namespace

std::string JitFileName(JitFileKind kind, uint32_t pid) {
  switch (kind) {
    case JitFileKind::kPerfMap:
      return absl::StrCat("perf-", pid, ".map");
    case JitFileKind::kJitdump:
      return absl::StrCat("jit-", pid, ".dump");
    case JitFileKind::kPerfInfo:
      return absl::StrCat("perfinfo-", pid, ".map");
  }
  return "";
}

absl::StatusOr<base::UniqueFd> TargetJitFiles::Open(uint32_t pid, JitFileKind,
                                                    const std::string& path) {
  std::shared_ptr<base::RootDir> root = files_ == nullptr ? nullptr : files_->RootFor(pid);
  if (root == nullptr) {
    return absl::UnavailableError(absl::StrCat("files of pid ", pid, " are not available"));
  }
  absl::StatusOr<base::UniqueFd> fd = root->OpenFile(path);
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file"));
  }
  return fd;
}

struct JitSources::Process {
  std::shared_ptr<const PerfMap> perf_map;  // shared with the cache, if any
  std::unique_ptr<Jitdump> jitdump;
  std::unique_ptr<PerfInfoMap> perf_info;
  std::string perf_map_path;  // where it was looked for, for hints
  std::vector<std::string> loaded;
  bool from_events = false;   // `jitdump` holds the runtime's method events
};

JitSources::JitSources(JitFileSource* source, const ProcessFiles* processes)
    : source_(source), processes_(processes) {}

JitSources::~JitSources() = default;

void JitSources::OnMmap(const recording::Mmap& mmap) {
  if (!IsJitdumpName(mmap.filename)) return;
  jitdump_paths_.insert_or_assign(mmap.pid, mmap.filename);
  // The runtime may have run JIT code (and been asked about) before it
  // mapped its jitdump: read its files again, now knowing where it is. The
  // replay is the same wherever it runs, so every run reloads at the same
  // record.
  auto it = loaded_.find(mmap.pid);
  if (it != loaded_.end() && it->second->jitdump == nullptr) loaded_.erase(it);
}

std::string JitSources::PathInside(uint32_t pid, JitFileKind kind) const {
  // The runtime names its files after the pid it sees (getpid() inside its
  // PID namespace) and writes them to /tmp (jit-interface.txt), or where
  // DOTNET_PerfMapJitDumpPath says (coreclr perfmap.cpp).
  const uint32_t seen_as = processes_ == nullptr ? pid : processes_->NamespacePid(pid);
  const std::string dir = processes_ == nullptr ? "/tmp" : processes_->JitDirectory(pid);
  if (kind == JitFileKind::kJitdump) {
    auto it = jitdump_paths_.find(pid);
    if (it != jitdump_paths_.end()) {
      absl::string_view path = it->second;
      absl::ConsumeSuffix(&path, " (deleted)");
      return std::string(path);
    }
  }
  return absl::StrCat(dir, "/", JitFileName(kind, seen_as));
}

void JitSources::Warn(std::string warning) {
  if (warned_.insert(warning).second) warnings_.push_back(std::move(warning));
}

JitSources::Process& JitSources::Load(uint32_t pid) {
  auto [it, inserted] = loaded_.try_emplace(pid);
  if (!inserted) return *it->second;
  it->second = std::make_unique<Process>();
  Process& p = *it->second;
  if (source_ == nullptr) return p;
  for (JitFileKind kind : {JitFileKind::kPerfMap, JitFileKind::kJitdump, JitFileKind::kPerfInfo}) {
    const std::string path = PathInside(pid, kind);
    const std::string what = absl::StrCat(path, " of pid ", pid);
    if (kind == JitFileKind::kPerfMap) p.perf_map_path = path;
    absl::StatusOr<base::UniqueFd> fd = source_->Open(pid, kind, path);
    if (!fd.ok()) {
      // Absent files, or no files at all (postprocess elsewhere), are normal.
      if (!absl::IsNotFound(fd.status()) && !absl::IsUnavailable(fd.status())) {
        Warn(absl::StrCat("cannot read ", what, ": ", fd.status().message()));
      }
      continue;
    }
    switch (kind) {
      case JitFileKind::kPerfMap: {
        absl::StatusOr<std::shared_ptr<const PerfMap>> map =
            cache_ != nullptr ? cache_->ReadPerfMap(pid, fd->get(), what)
                              : ReadPerfMap(fd->get(), what);
        if (!map.ok()) {
          Warn(absl::StrCat("cannot read ", what, ": ", map.status().message()));
          break;
        }
        for (std::string& w : (*map)->Warnings(what)) Warn(std::move(w));
        p.loaded.push_back(absl::StrCat(JitFileName(kind, pid), " (", (*map)->stats().entries,
                                        " symbols)"));
        p.perf_map = std::move(*map);
        break;
      }
      case JitFileKind::kJitdump: {
        absl::StatusOr<Jitdump> dump = Jitdump::Read(fd->get(), what);
        if (!dump.ok()) {
          Warn(absl::StrCat("cannot read ", what, ": ", dump.status().message()));
          break;
        }
        for (std::string& w : dump->Warnings(what)) Warn(std::move(w));
        p.loaded.push_back(absl::StrCat(JitFileName(kind, pid), " (", dump->region_count(),
                                        " code regions)"));
        p.jitdump = std::make_unique<Jitdump>(std::move(*dump));
        break;
      }
      case JitFileKind::kPerfInfo: {
        absl::StatusOr<std::string> text =
            base::ReadFdBounded(fd->get(), kMaxPerfInfoBytes, what, /*truncate_ok=*/true);
        if (!text.ok()) {
          Warn(absl::StrCat("cannot read ", what, ": ", text.status().message()));
          break;
        }
        PerfInfoMap info = PerfInfoMap::Parse(*text);
        if (info.malformed > 0) {
          Warn(absl::StrCat(what, ": skipped ", info.malformed, " malformed line(s)"));
        }
        p.loaded.push_back(
            absl::StrCat(JitFileName(kind, pid), " (", info.images.size(), " image loads)"));
        p.perf_info = std::make_unique<PerfInfoMap>(std::move(info));
        break;
      }
    }
  }
  if (p.perf_map == nullptr && p.jitdump == nullptr && events_ != nullptr) {
    std::string described;
    p.jitdump = events_->CodeOf(pid, &described);
    if (p.jitdump != nullptr) {
      p.from_events = true;
      p.loaded.push_back(std::move(described));
    }
  }
  return p;
}

uint32_t JitSources::Generation(uint32_t pid, uint64_t address, uint64_t time_ns) {
  Process& p = Load(pid);
  return p.jitdump == nullptr ? 0 : p.jitdump->Generation(address, time_ns);
}

std::optional<Symbolization> JitSources::Resolve(const CodeLocation& location,
                                                 absl::string_view mapping_name) {
  const uint32_t pid = location.space;
  const uint64_t address = location.value;
  Process& p = Load(pid);
  Frame frame;
  bool found = false;
  auto from_jitdump = [&] {
    if (found || location.epoch == 0 || p.jitdump == nullptr) return;
    std::optional<JitdumpMatch> match = p.jitdump->Lookup(location.epoch, address);
    if (match.has_value()) {
      frame.function = std::string(WithoutReturnType(match->name));
      frame.offset = match->offset;
      frame.source_file = std::string(match->source_file);
      frame.line = match->line;
      found = true;
    }
  };
  auto from_perf_map = [&] {
    if (found || p.perf_map == nullptr) return;
    std::optional<PerfMapMatch> match = p.perf_map->Lookup(address);
    if (match.has_value()) {
      frame.function = std::string(WithoutReturnType(match->name));
      frame.offset = match->offset;
      found = true;
    }
  };
  // The jitdump knows what was where when; but code it logged only after the
  // sample (a replay) is a guess the perf map may beat (Jitdump::Generation).
  if ((location.epoch & Jitdump::kLoggedLater) != 0) {
    from_perf_map();
    from_jitdump();
  } else {
    from_jitdump();
    from_perf_map();
  }
  if (found) {
    // perf names JIT frames' module after the map with the pid it was
    // recorded under; FlameScope and stackcollapse --jit key on that.
    Symbolization s;
    s.module = absl::StrCat("/tmp/perf-", pid, ".map");
    s.frames.push_back(std::move(frame));
    return s;
  }
  const bool has_files = p.perf_map != nullptr || p.jitdump != nullptr;
  if (IsManagedImageMapping(mapping_name) && p.jitdump == nullptr) {
    const bool listed = p.perf_info != nullptr && p.perf_info->ImageFor(mapping_name) != nullptr;
    Warn(absl::StrCat("pid ", pid, " runs precompiled .NET code from ", mapping_name,
                      listed ? " (listed in its perfinfo map)" : "",
                      " that only a jitdump names ([PreJIT] methods); set "
                      "DOTNET_PerfMapEnabled=1 (or 2) in its environment"));
  } else if (p.from_events && base::LooksLikeJitMapping(mapping_name)) {
    Warn(absl::StrCat("pid ", pid, " ran JIT code its runtime's method events do not name "
                      "(stubs and helpers have no load events; code compiled and freed "
                      "outside the session is not listed)"));
  } else if (p.jitdump != nullptr && p.perf_map == nullptr &&
             base::LooksLikeJitMapping(mapping_name)) {
    Warn(absl::StrCat("pid ", pid, " ran JIT code its jitdump does not describe; the runtime "
                      "may not have written it out yet (V8 buffers --perf-prof output until it "
                      "exits): profile with `profcpu record`, or add a perf map "
                      "(--perf-basic-prof, DOTNET_PerfMapEnabled=1)"));
  } else if (!has_files && base::LooksLikeJitMapping(mapping_name) && source_ != nullptr) {
    // Only the collector, which looked while the process ran, can tell
    // "never written" from "removed before anyone looked".
    const bool watched = processes_ != nullptr && processes_->PerfMapNeverSeen(pid);
    Warn(absl::StrCat("pid ", pid,
                      watched ? absl::StrCat(" ran JIT code but profcpu found no ",
                                             p.perf_map_path, " of it at any look while it "
                                             "ran (every 100 ms; a map written and removed "
                                             "between two looks is missed)")
                              : absl::StrCat(" has JIT code but profcpu found no ",
                                             p.perf_map_path, " of it"),
                      " (nor a jitdump); its JIT frames stay [unknown] (for .NET, set "
                      "DOTNET_PerfMapEnabled=1 in its environment; for Node.js, run it with "
                      "--perf-basic-prof or --perf-prof)"));
  }
  return std::nullopt;
}

const char* JitSources::NameSourceOf(const CodeLocation& location) {
  if (location.kind != CodeKind::kProcess) return "";
  Process& p = Load(location.space);
  const bool in_jitdump = location.epoch != 0 && p.jitdump != nullptr &&
                          p.jitdump->Lookup(location.epoch, location.value).has_value();
  const bool in_perf_map = p.perf_map != nullptr && p.perf_map->Lookup(location.value).has_value();
  const char* jitdump = p.from_events ? "method_events" : "jitdump";
  // Resolve's order: code logged after the sample prefers the perf map.
  if ((location.epoch & Jitdump::kLoggedLater) != 0) {
    return in_perf_map ? "perf_map" : in_jitdump ? jitdump : "";
  }
  return in_jitdump ? jitdump : in_perf_map ? "perf_map" : "";
}

void JitSources::TakeWarnings(std::vector<std::string>* out) {
  for (std::string& w : warnings_) out->push_back(std::move(w));
  warnings_.clear();
}

std::vector<std::string> JitSources::Loaded() const {
  std::vector<std::string> out;
  for (const auto& [pid, process] : loaded_) {
    out.insert(out.end(), process->loaded.begin(), process->loaded.end());
  }
  return out;
}

bool JitSources::NamesAnyCode(uint32_t pid, absl::string_view part) {
  Process& p = Load(pid);
  return (p.perf_map != nullptr && p.perf_map->AnyNameContains(part)) ||
         (p.jitdump != nullptr && p.jitdump->AnyNameContains(part));
}

std::string JitSources::CodeName(uint32_t pid, uint64_t address, uint32_t generation) {
  // No mapping name: Resolve's hints about missing files do not apply here.
  std::optional<Symbolization> named =
      Resolve({CodeKind::kProcess, pid, address, generation}, /*mapping_name=*/"");
  return named.has_value() && !named->frames.empty() ? std::move(named->frames[0].function) : "";
}

}  // namespace profcpu::symbolize
