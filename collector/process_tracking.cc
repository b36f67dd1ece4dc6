#include "collector/process_tracking.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/jit_mapping.h"
#include "base/rooted_open.h"
#include "collector/monotonic_clock.h"
#include "collector/proc/proc_reader.h"
#include "collector/proc/process_environment.h"

namespace profcpu::collector {

recording::ProcessInfo DescribeProcess(pid_t pid, uint64_t time_ns) {
  recording::ProcessInfo info;
  info.time_ns = time_ns;
  info.pid = static_cast<uint32_t>(pid);
  auto ns_pids = ReadNamespacePids(pid);
  info.namespace_pids = ns_pids.ok() ? *ns_pids : std::vector<uint32_t>{info.pid};
  auto cmdline = ReadCommandLine(pid);
  if (cmdline.ok()) info.command_line = *cmdline;
  auto env = ProcessEnvironment::Read(pid);
  if (env.ok()) info.jit_directory = env->DotnetPerfMapDirectory();
  return info;
}

// A file deleted since it was mapped is reached through /proc/PID/map_files
// (needs CAP_SYS_ADMIN; without it, it stays unnamed).
void KeepMappedFile(const recording::Mmap& mmap, ProcessRoots* roots) {
  if (mmap.filename.empty() || mmap.filename[0] != '/' ||
      absl::StartsWith(mmap.filename, "/memfd:") || absl::StartsWith(mmap.filename, "//")) {
    return;  // anonymous memory, JIT code, [vdso] and friends: no file
  }
  std::shared_ptr<base::RootDir> root = roots->Add(static_cast<pid_t>(mmap.pid));
  if (root == nullptr) return;
  absl::string_view path = mmap.filename;
  std::string map_files;
  if (absl::ConsumeSuffix(&path, " (deleted)")) {
    map_files = absl::StrFormat("/proc/%d/map_files/%x-%x", mmap.pid, mmap.start,
                                mmap.start + mmap.length);
  }
  (void)root->Keep(std::string(path), map_files);
}

void TailPerfMapOf(const recording::Mmap& mmap, const std::vector<recording::ProcessInfo>& processes,
                   uint64_t now_ns, ProcessRoots* roots, PerfMapTailer* tailer) {
  if (tailer == nullptr || !base::LooksLikeJitMapping(mmap.filename) ||
      tailer->Knows(mmap.pid)) {
    return;
  }
  auto described = std::find_if(processes.rbegin(), processes.rend(),
                                [&](const recording::ProcessInfo& p) { return p.pid == mmap.pid; });
  const recording::ProcessInfo info = described != processes.rend()
                                          ? *described
                                          : DescribeProcess(static_cast<pid_t>(mmap.pid), 0);
  const uint32_t seen_as = info.namespace_pids.empty() ? mmap.pid : info.namespace_pids.back();
  const std::string dir = info.jit_directory.empty() ? "/tmp" : info.jit_directory;
  // The root as it is now: a command may have entered a mount namespace of
  // its own (with its own /tmp) since its root was first opened. None when
  // the process has exited already: the tailer cannot say it looked while it
  // ran, and a map it left is copied after collection as before.
  tailer->Watch(mmap.pid, roots->Current(static_cast<pid_t>(mmap.pid)),
                absl::StrCat(dir, "/perf-", seen_as, ".map"), now_ns);
}

void SynthesizeExistingProcess(pid_t pid, uint64_t time_ns, RecordOrderer* orderer,
                               std::vector<recording::ProcessInfo>* processes,
                               std::vector<std::string>* warnings, ProcessRoots* roots,
                               PerfMapTailer* tailer) {
  processes->push_back(DescribeProcess(pid, time_ns));
  orderer->Add(processes->back());
  auto tids = ListThreads(pid);
  if (tids.ok()) {
    for (pid_t tid : *tids) {
      auto name = ReadThreadName(pid, tid);
      if (!name.ok()) continue;
      recording::Comm comm;
      comm.time_ns = time_ns;
      comm.pid = static_cast<uint32_t>(pid);
      comm.tid = static_cast<uint32_t>(tid);
      comm.comm = *name;
      comm.synthesized = true;
      orderer->Add(std::move(comm));
    }
  }
  auto maps = ReadProcMaps(pid, time_ns);
  if (!maps.ok()) {
    warnings->push_back(absl::StrCat("cannot read the mappings of process ", pid, ": ",
                                     maps.status().message(),
                                     "; its native frames will be [unknown] (needs "
                                     "CAP_SYS_PTRACE for another user's process)"));
    return;
  }
  for (recording::Mmap& m : *maps) {
    KeepMappedFile(m, roots);
    TailPerfMapOf(m, *processes, MonotonicNowNs(), roots, tailer);
    orderer->Add(std::move(m));
  }
}

}  // namespace profcpu::collector
