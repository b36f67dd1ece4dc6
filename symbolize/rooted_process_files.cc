#include "symbolize/rooted_process_files.h"

namespace profcpu::symbolize {

RootedProcessFiles::RootedProcessFiles(std::map<uint32_t, std::shared_ptr<base::RootDir>> roots,
                                       std::shared_ptr<base::RootDir> fallback,
                                       const std::vector<recording::ProcessInfo>& processes)
    : roots_(std::move(roots)), fallback_(std::move(fallback)) {
  for (const recording::ProcessInfo& info : processes) {
    // NStgid lists the pid outermost first; the process knows itself by the last.
    if (!info.namespace_pids.empty()) namespace_pids_[info.pid] = info.namespace_pids.back();
    if (!info.jit_directory.empty()) jit_directories_[info.pid] = info.jit_directory;
  }
}

std::shared_ptr<base::RootDir> RootedProcessFiles::RootFor(uint32_t pid) const {
  auto it = roots_.find(pid);
  return it != roots_.end() ? it->second : fallback_;
}

uint32_t RootedProcessFiles::NamespacePid(uint32_t pid) const {
  auto it = namespace_pids_.find(pid);
  return it != namespace_pids_.end() ? it->second : pid;
}

std::string RootedProcessFiles::JitDirectory(uint32_t pid) const {
  auto it = jit_directories_.find(pid);
  return it != jit_directories_.end() ? it->second : "/tmp";
}

}  // namespace profcpu::symbolize
