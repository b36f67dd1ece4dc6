#include "collector/bpf_collection.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collector/perf/event_spec.h"
#include "collector/perf/perf_event.h"
#include "collector/proc/cgroup.h"

namespace profcpu::collector {
namespace {

// On-CPU samples per second per CPU that `sampler` asks for: its frequency,
// or for a clock event in period mode one per period (ns); for other events
// in period mode the kernel's ceiling, kernel.perf_event_max_sample_rate.
double SamplesPerSecond(const SamplerOptions& sampler) {
  if (sampler.frequency_mode) return static_cast<double>(sampler.rate);
  const bool clock = sampler.event.type == PERF_TYPE_SOFTWARE &&
                     (sampler.event.config == PERF_COUNT_SW_CPU_CLOCK ||
                      sampler.event.config == PERF_COUNT_SW_TASK_CLOCK);
  if (clock && sampler.rate > 0) return 1e9 / static_cast<double>(sampler.rate);
  return KernelMaxSampleRate();
}

}  // namespace

void DescribeLeafCopy(const BpfCollectionOptions& options, recording::Header* header) {
  if (!options.leaf_copy || options.mode == ProfileMode::kCpu) return;
  header->callgraph = "fp+cfi";
  header->user_regs_mask = kLeafRegsMask;
  header->user_stack_size = PROFCPU_LEAF_COPY_MAX;
}

absl::StatusOr<std::unique_ptr<BpfCollection>> BpfCollection::Create(
    const BpfCollectionOptions& options, const OffCpuScope& scope, SamplerOptions* sampler) {
  const bool offcpu = options.mode != ProfileMode::kCpu;
  const bool oncpu = options.mode != ProfileMode::kOffCpu && options.backend == SamplingBackend::kBpf;
  if (!offcpu && !oncpu) return nullptr;

  BpfOptions bpf;
  bpf.offcpu = offcpu;
  bpf.oncpu = oncpu;
  bpf.timestamps = options.timestamps;
  bpf.kernel_stacks = sampler->kernel_stacks;
  bpf.leaf_copy = offcpu && options.leaf_copy;
  if (scope.all_processes) {
    bpf.scope = PROFCPU_SCOPE_ALL;
  } else if (!scope.cgroup_dir.empty()) {
    PROFCPU_ASSIGN_OR_RETURN(CgroupIdentity cgroup, CgroupIdentityOf(scope.cgroup_dir));
    bpf.scope = PROFCPU_SCOPE_CGROUP;
    bpf.cgroup_id = cgroup.id;
    bpf.cgroup_level = cgroup.level;
  }
  // bpf_get_stack walks at most kernel.perf_event_max_stack frames.
  bpf.max_stack_depth = std::clamp(PerfEventMaxStack(), 1, PROFCPU_MAX_STACK_DEPTH);
  if (oncpu) {
    bpf.ring_buffer_bytes = BpfSession::RingBufferBytes(
        SamplesPerSecond(*sampler), static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)),
        bpf.max_stack_depth);
  }
  bpf.what = oncpu && !offcpu ? "-backend bpf"
                              : absl::StrCat("-mode ", ProfileModeName(options.mode));
  PROFCPU_ASSIGN_OR_RETURN(std::unique_ptr<BpfSession> session, BpfSession::Open(bpf));
  if (offcpu) PROFCPU_RETURN_IF_ERROR(session->AttachScheduler());

  if (options.mode == ProfileMode::kOffCpu) {
    // Tracking only: the software "dummy" event never samples but carries
    // the mmap, comm and task records replay needs (perf does the same).
    sampler->event = EventSpec{"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, false};
  }
  auto collection = std::unique_ptr<BpfCollection>(new BpfCollection(options, std::move(session)));
  if (oncpu) {
    BpfSession* raw = collection->session_.get();
    sampler->on_event_opened = [raw](int fd) { return raw->AttachToPerfEvent(fd); };
  }
  return collection;
}

absl::Status BpfCollection::TrackProcess(pid_t pid, uint64_t since_ns) {
  if (options_.mode == ProfileMode::kCpu) return absl::OkStatus();
  session_->IgnoreStaysBefore(since_ns);
  return pid > 0 ? session_->TrackProcess(pid) : absl::OkStatus();
}

absl::StatusOr<uint64_t> BpfCollection::SnapshotBlockedThreads(RecordOrderer* orderer) {
  if (options_.mode == ProfileMode::kCpu) return 0;
  return session_->SnapshotBlockedThreads(
      [orderer](recording::Record&& record) { orderer->Add(std::move(record)); });
}

absl::Status BpfCollection::Poll(uint64_t now_ns, bool final, RecordOrderer* orderer) {
  auto sink = [orderer](recording::Record&& record) { orderer->Add(std::move(record)); };
  session_->DrainEvents(sink);
  if (final) session_->ReportStaysInProgress(now_ns, sink);
  if (final || now_ns - last_counts_ns_ >= kCountIntervalNs) {
    session_->DrainCounts(now_ns, sink);
    session_->DrainLosses(now_ns, sink);
    last_counts_ns_ = now_ns;
  }
  return absl::OkStatus();
}

uint64_t BpfCollection::samples() const {
  return session_->counters().samples + session_->counters().offcpu_events;
}

uint64_t BpfCollection::lost() const {
  const BpfCounters& c = session_->counters();
  return c.losses[PROFCPU_LOSS_RINGBUF];
}

std::vector<std::string> BpfCollection::warnings() const {
  const BpfCounters& c = session_->counters();
  std::vector<std::string> warnings;
  if (c.losses[PROFCPU_LOSS_RINGBUF] > 0) {
    warnings.push_back(absl::StrCat(c.losses[PROFCPU_LOSS_RINGBUF],
                                    " BPF events were lost because the BPF ring buffer was full "
                                    "(profcpu did not keep up)"));
  }
  if (c.leaf_copies_failed > 0) {
    warnings.push_back(absl::StrCat(
        c.leaf_copies_failed, " of ", c.leaf_copies,
        " off-CPU switch-outs have no user stack copy (the stack was not resident): their "
        "leaf's caller cannot be repaired"));
  }
  uint64_t maps = c.losses[PROFCPU_LOSS_BLOCKED_FULL] + c.losses[PROFCPU_LOSS_TGIDS_FULL];
  if (maps > 0) {
    warnings.push_back(absl::StrCat(maps, " off-CPU events were lost because a BPF map of "
                                          "blocked threads or profiled processes was full"));
  }
  if (c.losses[PROFCPU_LOSS_MISSED_SWITCH] > 0) {
    warnings.push_back(absl::StrCat(c.losses[PROFCPU_LOSS_MISSED_SWITCH],
                                    " off-CPU stays were dropped: the kernel reported neither "
                                    "the switch nor the wakeup that ended them"));
  }
  if (uint64_t misses = session_->ProgramMisses(); misses > 0) {
    warnings.push_back(absl::StrCat("the kernel skipped the BPF programs ", misses,
                                    " times (a program already running on that CPU)"));
  }
  return warnings;
}

}  // namespace profcpu::collector
