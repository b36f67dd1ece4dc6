#include "scripts/cli/process_files.h"

namespace profcpu::cli {

ProcessFiles::ProcessFiles(std::map<uint32_t, std::shared_ptr<base::RootDir>> roots,
                           std::shared_ptr<base::RootDir> fallback,
                           const std::vector<recording::ProcessInfo>& processes)
    : roots_(std::move(roots)), fallback_(std::move(fallback)) {
  for (const recording::ProcessInfo& info : processes) {
    // NStgid lists the pid outermost first; the process knows itself by the last.
    if (!info.namespace_pids.empty()) namespace_pids_[info.pid] = info.namespace_pids.back();
  }
}

std::shared_ptr<base::RootDir> ProcessFiles::RootFor(uint32_t pid) const {
  auto it = roots_.find(pid);
  return it != roots_.end() ? it->second : fallback_;
}

uint32_t ProcessFiles::NamespacePid(uint32_t pid) const {
  auto it = namespace_pids_.find(pid);
  return it != namespace_pids_.end() ? it->second : pid;
}

}  // namespace profcpu::cli
