// The BPF half of a collection (collection.h): decides from the mode and
// backend what the BPF programs do and what the perf sampler still does,
// then feeds BPF records into the same recording, in time order, as the
// sampler's. The sampler keeps its per-thread inherited events in every mode:
// their MMAP2/COMM/FORK/EXIT records drive normalization at replay, so BPF
// stacks are symbolized exactly like perf samples (same JIT, container and
// symbol path).
//   -mode offcpu:   sampler on a "dummy" event (tracking only, no samples),
//                   BPF on sched_switch.
//   -backend bpf:   sampler on the sampling event, the BPF program attached to
//                   each of its events sends each sample's stacks inline;
//                   they are counted per second in user space.
//   -mode wall:     both halves.
#ifndef PROFCPU_COLLECTOR_BPF_COLLECTION_H_
#define PROFCPU_COLLECTOR_BPF_COLLECTION_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/bpf/bpf_session.h"
#include "collector/perf/perf_record_parser.h"
#include "collector/profile_mode.h"
#include "collector/record_orderer.h"
#include "collector/sampler.h"

namespace profcpu::collector {

// How often counted on-CPU samples are written: the time resolution of
// counted samples.
inline constexpr uint64_t kCountIntervalNs = 1'000'000'000;

struct BpfCollectionOptions {
  ProfileMode mode = ProfileMode::kCpu;
  SamplingBackend backend = SamplingBackend::kPerf;
  // -backend bpf: one timestamped record per sample instead of per-second counts.
  bool timestamps = false;
  // -callgraph fp+cfi: off-CPU switch-outs carry the user registers and a
  // copy of the user stack (BpfOptions::leaf_copy).
  bool leaf_copy = false;
};

// Whose off-CPU time is recorded: the processes TrackProcess names (and
// their children) when neither field is set.
struct OffCpuScope {
  std::string cgroup_dir;  // a cgroup v2 directory: every task in it or below
  bool all_processes = false;
};

// The recording header's call-graph fields when off-CPU switch-outs carry
// the leaf's registers and stack copy (-callgraph fp+cfi); leaves `header`
// alone otherwise. Called where the header is made (collection.cc).
void DescribeLeafCopy(const BpfCollectionOptions& options, recording::Header* header);

class BpfCollection {
 public:
  // nullptr when the mode and backend need no BPF. Otherwise loads the
  // programs (errors say what is missing: bpf_support.h) and adapts
  // `sampler` (its event and its per-event hook) to the mode.
  static absl::StatusOr<std::unique_ptr<BpfCollection>> Create(const BpfCollectionOptions& options,
                                                               const OffCpuScope& scope,
                                                               SamplerOptions* sampler);

  // Starts recording off-CPU time from `since_ns` on (CLOCK_MONOTONIC), of
  // process `pid` and its children when the scope is processes (pid 0: of
  // the cgroup or machine in scope). A started command is tracked before
  // profcpu releases it, so its first children are not missed, but its wait
  // for that release is not its own off-CPU time.
  absl::Status TrackProcess(pid_t pid, uint64_t since_ns);
  // For targets already running (collect, not record), after TrackProcess:
  // the threads in scope blocked already get a stay from `since_ns` on
  // (BpfSession::SnapshotBlockedThreads). Returns how many; 0 in -mode cpu.
  absl::StatusOr<uint64_t> SnapshotBlockedThreads(RecordOrderer* orderer);
  // Moves what the programs recorded into `orderer`: ring-buffer events on
  // every call, counts and losses once a second (and when `final`).
  absl::Status Poll(uint64_t now_ns, bool final, RecordOrderer* orderer);

  // Samples (on-CPU, counted or not) and off-CPU events recorded so far.
  uint64_t samples() const;
  // Samples and events lost for want of room in BPF maps or ring buffer.
  uint64_t lost() const;
  std::vector<std::string> warnings() const;

 private:
  BpfCollection(const BpfCollectionOptions& options, std::unique_ptr<BpfSession> session)
      : options_(options), session_(std::move(session)) {}

  BpfCollectionOptions options_;
  std::unique_ptr<BpfSession> session_;
  uint64_t last_counts_ns_ = 0;
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_BPF_COLLECTION_H_
