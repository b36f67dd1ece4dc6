#include "collector/collection_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collector/proc/proc_reader.h"

namespace profcpu::collector {

std::string DescribeTarget(const CollectionOptions& options) {
  if (!options.command.empty()) return absl::StrJoin(options.command, " ");
  if (options.pid > 0) {
    return DescribeProcessTarget(ReadThreadGroupId(options.pid).value_or(options.pid), options.pid);
  }
  if (!options.container_id.empty()) {
    return absl::StrCat("container ", options.container_id.substr(0, 12));
  }
  if (!options.cgroup_dir.empty()) return absl::StrCat("cgroup ", options.cgroup_dir);
  return "all processes";
}

std::string DescribeProcessTarget(pid_t process, pid_t given_thread) {
  if (given_thread <= 0 || given_thread == process) return absl::StrCat("pid ", process);
  return absl::StrCat("pid ", process, " (the process of thread ", given_thread, ")");
}

std::string DescribeSampling(const CollectionOptions& options) {
  const BpfCollectionOptions& profile = options.profile;
  if (profile.mode == ProfileMode::kOffCpu) return "off-CPU time (BPF)";
  return absl::StrCat(options.sampler.rate, " Hz (", options.sampler.event.name,
                      profile.backend == SamplingBackend::kBpf ? ", BPF" : "", ")",
                      profile.mode == ProfileMode::kWall ? " and off-CPU time" : "");
}

}  // namespace profcpu::collector
