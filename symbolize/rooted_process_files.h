// Tells the symbolizer where each profiled process's files are: the roots
// the collector opened while the processes lived (none when post-processing
// elsewhere), and the pid each process sees itself as (its perf map's name).
#ifndef PROFCPU_SYMBOLIZE_ROOTED_PROCESS_FILES_H_
#define PROFCPU_SYMBOLIZE_ROOTED_PROCESS_FILES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/rooted_open.h"
#include "recording/records.h"
#include "symbolize/process_files.h"

namespace profcpu::symbolize {

class RootedProcessFiles : public ProcessFiles {
 public:
  // `roots` by pid; `fallback` serves processes with no root of their own
  // (children that exited before their root could be opened). Either may be empty.
  RootedProcessFiles(std::map<uint32_t, std::shared_ptr<base::RootDir>> roots,
               std::shared_ptr<base::RootDir> fallback,
               const std::vector<recording::ProcessInfo>& processes);

  std::shared_ptr<base::RootDir> RootFor(uint32_t pid) const override;
  uint32_t NamespacePid(uint32_t pid) const override;
  std::string JitDirectory(uint32_t pid) const override;
  bool PerfMapNeverSeen(uint32_t pid) const override { return perf_map_never_seen_.contains(pid); }

  // The processes whose perf map the collector looked for in vain.
  void SetPerfMapNeverSeen(absl::flat_hash_set<uint32_t> pids) {
    perf_map_never_seen_ = std::move(pids);
  }

 private:
  std::map<uint32_t, std::shared_ptr<base::RootDir>> roots_;
  std::shared_ptr<base::RootDir> fallback_;
  absl::flat_hash_map<uint32_t, uint32_t> namespace_pids_;
  absl::flat_hash_map<uint32_t, std::string> jit_directories_;
  absl::flat_hash_set<uint32_t> perf_map_never_seen_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_ROOTED_PROCESS_FILES_H_
