#include "scripts/cli/jit_files.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "collector/base/file_io.h"
#include "scripts/cli/output_dir.h"

namespace profcpu::cli {
namespace {
// Perf maps of long-running JIT processes grow large; beyond this the copy
// is skipped (the symbols resolved from it are in the snapshot anyway).
constexpr size_t kMaxJitFileBytes = 512ull << 20;
}  // namespace

std::vector<std::string> CopyJitFiles(const std::string& run_dir, const std::vector<uint32_t>& pids,
                                      const symbolize::ProcessFiles& files, RunLog* log) {
  std::vector<std::string> written;
  for (uint32_t pid : pids) {
    auto root = files.RootFor(pid);
    if (root == nullptr) continue;
    std::string source = absl::StrCat("/tmp/perf-", files.NamespacePid(pid), ".map");
    auto contents = root->ReadFile(source, kMaxJitFileBytes);
    if (!contents.ok()) {
      if (!absl::IsNotFound(contents.status())) {
        log->Warn(absl::StrCat("not archiving ", source, ": ", contents.status().message()));
      }
      continue;
    }
    std::string dir = absl::StrCat(run_dir, "/", kJitDir);
    ::mkdir(dir.c_str(), 0755);
    std::string name = absl::StrCat(kJitDir, "/perf-", pid, ".map");
    absl::Status status = base::WriteFile(absl::StrCat(run_dir, "/", name), *contents);
    if (!status.ok()) {
      log->Warn(absl::StrCat("cannot save ", name, ": ", status.message()));
      continue;
    }
    written.push_back(name);
  }
  return written;
}

}  // namespace profcpu::cli
