#include "symbolize/debug_file_finder.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/file_io.h"

namespace profcpu::symbolize {
namespace {

// "/usr/lib/x.so" -> "/usr/lib"; "/x.so" -> "".
absl::string_view DirName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? absl::string_view() : path.substr(0, slash);
}

// A module path worth building debug paths from: absolute, no "..", no NUL.
bool UsablePath(absl::string_view path) {
  return absl::StartsWith(path, "/") && !absl::StrContains(path, "/../") &&
         !absl::EndsWith(path, "/..") && path.find('\0') == absl::string_view::npos;
}

}  // namespace

absl::string_view DebugFileRuleName(DebugFileRule rule) {
  switch (rule) {
    case DebugFileRule::kBuildId:
      return "build-id";
    case DebugFileRule::kDebugLinkBeside:
      return "debuglink beside the file";
    case DebugFileRule::kDebugLinkSubdir:
      return "debuglink in .debug/";
    case DebugFileRule::kDebugLinkGlobal:
      return "debuglink under the debug directory";
    case DebugFileRule::kPath:
      return "path.debug";
    case DebugFileRule::kFlat:
      return "file name in a symbol directory";
  }
  return "?";
}

bool IsDebugLinkRule(DebugFileRule rule) {
  return rule == DebugFileRule::kDebugLinkBeside || rule == DebugFileRule::kDebugLinkSubdir ||
         rule == DebugFileRule::kDebugLinkGlobal;
}

std::string DebuginfodClientCacheDir(const char* cache_path, const char* xdg_cache_home,
                                     const char* home) {
  auto set = [](const char* v) { return v != nullptr && v[0] != '\0'; };
  if (set(cache_path)) return cache_path;
  if (set(xdg_cache_home)) return absl::StrCat(xdg_cache_home, "/debuginfod_client");
  if (set(home)) return absl::StrCat(home, "/.cache/debuginfod_client");
  return "";
}

std::string DebuginfodClientCacheDir() {
  return DebuginfodClientCacheDir(::getenv("DEBUGINFOD_CACHE_PATH"), ::getenv("XDG_CACHE_HOME"),
                                  ::getenv("HOME"));
}

std::vector<DebugSearchRoot> OpenDebugSearchRoots(const std::string& own_root,
                                                  const std::vector<std::string>& symbol_dirs,
                                                  const std::string& debuginfod_cache,
                                                  std::vector<std::string>* warnings) {
  std::vector<DebugSearchRoot> roots;
  if (!own_root.empty()) {
    absl::StatusOr<std::shared_ptr<base::RootDir>> own = base::RootDir::Open(own_root);
    if (own.ok()) {
      DebugSearchRoot root{*own, DebugSearchRoot::Kind::kSystem, "the profiler's root"};
      if (own_root == "/") {
        // The machine profcpu runs on: the sidecar's image, or the laptop
        // that postprocesses an archive with its own debug packages.
        root.description = "this machine's root";
        const char* dir = ::getenv(kDebugDirEnvVar);
        if (dir != nullptr && dir[0] == '/') root.debug_dir = dir;
      }
      roots.push_back(std::move(root));
    }
  }
  for (const std::string& dir : symbol_dirs) {
    absl::StatusOr<std::shared_ptr<base::RootDir>> root = base::RootDir::Open(dir);
    if (root.ok()) {
      roots.push_back({*root, DebugSearchRoot::Kind::kSymbolDir, dir});
    } else {
      warnings->push_back(
          absl::StrCat("symbol directory ", dir, " is not usable: ", root.status().message()));
    }
  }
  if (!debuginfod_cache.empty()) {
    absl::StatusOr<std::shared_ptr<base::RootDir>> cache = base::RootDir::Open(debuginfod_cache);
    if (cache.ok()) {
      roots.push_back({*cache, DebugSearchRoot::Kind::kDebuginfodCache,
                       absl::StrCat("this machine's debuginfod cache ", debuginfod_cache)});
    }
  }
  return roots;
}

std::vector<DebugFileCandidate> DebugFileCandidates(const DebugFileQuery& query,
                                                   const std::vector<DebugSearchRoot>& roots) {
  std::vector<DebugFileCandidate> out;
  auto add = [&out](const DebugSearchRoot& root, std::string path, DebugFileRule rule) {
    out.push_back({&root, std::move(path), rule});
  };
  using Kind = DebugSearchRoot::Kind;
  // The debug directory inside each kind of root.
  auto debug_dir = [](const DebugSearchRoot& root) {
    return root.kind == Kind::kSystem ? absl::string_view(root.debug_dir) : absl::string_view();
  };

  // 1. build-id: the first byte names a directory, the rest the file; the
  // debuginfod cache names a directory by the whole build-id.
  if (query.build_id.size() >= 2) {
    std::string hex = absl::BytesToHexString(query.build_id);
    for (const DebugSearchRoot& root : roots) {
      if (root.kind == Kind::kDebuginfodCache) {
        add(root, absl::StrCat("/", hex, "/debuginfo"), DebugFileRule::kBuildId);
      } else {
        add(root, absl::StrCat(debug_dir(root), "/.build-id/", hex.substr(0, 2), "/",
                               hex.substr(2), ".debug"),
            DebugFileRule::kBuildId);
      }
    }
  }

  const bool path_ok = UsablePath(query.module_path);
  const absl::string_view dir = path_ok ? DirName(query.module_path) : absl::string_view();

  // 2. debuglink, in the three places elfutils and GDB look.
  if (query.debug_link.has_value()) {
    const std::string& link = query.debug_link->name;
    for (const DebugSearchRoot& root : roots) {
      if (root.kind == Kind::kDebuginfodCache) continue;
      if (path_ok && root.kind == Kind::kSystem) {
        add(root, absl::StrCat(dir, "/", link), DebugFileRule::kDebugLinkBeside);
        add(root, absl::StrCat(dir, "/.debug/", link), DebugFileRule::kDebugLinkSubdir);
      }
      if (path_ok) {
        add(root, absl::StrCat(debug_dir(root), dir, "/", link), DebugFileRule::kDebugLinkGlobal);
      }
      if (root.kind == Kind::kSymbolDir) add(root, absl::StrCat("/", link), DebugFileRule::kFlat);
    }
  }

  // 3. the module's own path under the debug directory.
  if (path_ok) {
    for (const DebugSearchRoot& root : roots) {
      if (root.kind == Kind::kDebuginfodCache) continue;
      add(root, absl::StrCat(debug_dir(root), query.module_path, ".debug"), DebugFileRule::kPath);
    }
    // Flat files in a symbol directory, found by the module's file name: an
    // unstripped copy, or NAME.debug / NAME.dbg. Only a matching build-id
    // makes one acceptable (module_symbols.cc), as nothing else ties it.
    if (!query.build_id.empty()) {
      absl::string_view base = base::BaseName(query.module_path);
      for (const DebugSearchRoot& root : roots) {
        if (root.kind != Kind::kSymbolDir || base.empty()) continue;
        for (absl::string_view suffix : {"", ".debug", ".dbg"}) {
          add(root, absl::StrCat("/", base, suffix), DebugFileRule::kFlat);
        }
      }
    }
  }
  return out;
}

absl::StatusOr<uint32_t> DebugLinkCrc(int fd, uint64_t max_bytes) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return base::ErrnoStatus(errno, "stat debug file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("debug file of ", st.st_size,
                                                     " bytes is over the limit of ", max_bytes));
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  std::string buffer(1 << 16, '\0');
  uint64_t offset = 0;
  while (true) {
    ssize_t n = ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return base::ErrnoStatus(errno, "read debug file");
    }
    if (n == 0) break;
    offset += static_cast<uint64_t>(n);
    if (offset > max_bytes) {
      return absl::ResourceExhaustedError("debug file grew over the size limit while read");
    }
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(n));
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace profcpu::symbolize
