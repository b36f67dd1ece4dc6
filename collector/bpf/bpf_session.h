// The BPF side of collection (libbpf, the bpftool skeleton of
// profcpu.bpf.c): opens, sizes, loads and attaches the programs, then turns
// what they record into recording records: StackTrace (each distinct stack
// once, before the first record naming it), OffCpuSample, StackSample.
// Lifecycle as in libbpf-bootstrap: open, configure (read-only data, map
// sizes, which programs load), load (CO-RE relocation against the kernel's
// BTF, verification), attach; links and the skeleton are released on
// destruction, which detaches everything.
#ifndef PROFCPU_COLLECTOR_BPF_BPF_SESSION_H_
#define PROFCPU_COLLECTOR_BPF_BPF_SESSION_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "collector/bpf/bpf_events.h"
#include "collector/bpf/inline_events.h"
#include "collector/bpf/sample_counts.h"
#include "recording/records.h"

struct profcpu_bpf;
struct bpf_link;
struct ring_buffer;

namespace profcpu::collector {

struct BpfOptions {
  bool offcpu = false;      // scheduler programs: time off the CPU
  bool oncpu = false;       // the perf_event program, attached to sampling events
  bool timestamps = false;  // on-CPU: a StackSample per sample instead of counts
  bool kernel_stacks = true;
  // -callgraph fp+cfi: switch-outs carry the user registers and up to
  // PROFCPU_LEAF_COPY_MAX bytes of user stack (Linux 5.15: bpf_task_pt_regs).
  bool leaf_copy = false;
  // Off-CPU: whose time is recorded (PROFCPU_SCOPE_*); with
  // PROFCPU_SCOPE_PROCESSES, the processes TrackProcess names.
  uint32_t scope = PROFCPU_SCOPE_PROCESSES;
  uint64_t cgroup_id = 0;     // PROFCPU_SCOPE_CGROUP: the cgroup v2 id
  uint32_t cgroup_level = 0;  // and its depth below the v2 root
  int max_stack_depth = 127;  // at most kernel.perf_event_max_stack
  // The events ring buffer: a power of two of at least a page (RingBufferBytes).
  uint64_t ring_buffer_bytes = 4 << 20;
  // Names the mode in messages ("-mode offcpu", "-backend bpf").
  std::string what = "BPF collection";
};

struct BpfCounters {
  uint64_t offcpu_events = 0;
  uint64_t samples = 0;  // on-CPU samples (counted or timestamped)
  uint64_t stacks = 0;   // distinct stacks written
  uint64_t leaf_copies = 0;         // switch-outs with user registers and a stack copy
  uint64_t leaf_copies_failed = 0;  // switch-outs whose stack copy could not be read
  uint64_t stays_in_progress = 0;  // off-CPU stays cut at the end (ReportStaysInProgress)
  uint64_t losses[PROFCPU_LOSS_COUNT] = {};
};

class BpfSession {
 public:
  using Sink = std::function<void(recording::Record&&)>;

  // Errors say what is missing and what to do (bpf_support.h): Unimplemented
  // when the kernel lacks something, PermissionDenied for capabilities,
  // seccomp or lockdown, Internal otherwise.
  static absl::StatusOr<std::unique_ptr<BpfSession>> Open(const BpfOptions& options);
  // A ring buffer that holds 0.4 s of on-CPU samples at their largest
  // (both stacks `max_stack_depth` deep) at `samples_per_second` on each of
  // `cpus`: four of profcpu's 100 ms drains. At least 4 MiB (off-CPU events
  // come at the scheduler's pace), at most 256 MiB; a power of two.
  static uint64_t RingBufferBytes(double samples_per_second, int cpus, int max_stack_depth);
  ~BpfSession();
  BpfSession(const BpfSession&) = delete;
  BpfSession& operator=(const BpfSession&) = delete;

  // Profiles the threads of process `tgid` (as profcpu's pid namespace
  // numbers it) and of processes it starts.
  absl::Status TrackProcess(pid_t tgid);
  // Off-CPU stays that began before `time_ns` (CLOCK_MONOTONIC) are dropped.
  void IgnoreStaysBefore(uint64_t time_ns);
  // Attaches the off-CPU programs (sched_switch, fork, exit).
  absl::Status AttachScheduler();
  // Records a stay from now on (or from IgnoreStaysBefore's time) for every
  // thread in scope that is blocked already, with its stacks: call after
  // AttachScheduler and TrackProcess, when profiling running processes.
  // Returns how many threads it found; 0 without doing anything on kernels
  // before 5.18 (no sleepable task iterator reading another task's memory).
  // The stacks come as ring-buffer events, drained into `sink` as it goes.
  absl::StatusOr<uint64_t> SnapshotBlockedThreads(const Sink& sink);
  // Attaches the sampling program to a perf event (one of the Sampler's).
  absl::Status AttachToPerfEvent(int perf_event_fd);

  // Turns every event in the ring buffer into records.
  void DrainEvents(const Sink& sink);
  // Reports the threads still off the CPU at `now_ns` as stays ending then,
  // so a thread that blocked and never ran again (a hang, a deadlock) shows
  // up. Call once, when collection ends, after a last DrainEvents.
  void ReportStaysInProgress(uint64_t now_ns, const Sink& sink);
  // Emits a StackSample for every (thread, CPU, stacks) sampled since the
  // last call, stamped `now_ns` (nothing with timestamps: each sample was
  // written as it came). Call after DrainEvents.
  void DrainCounts(uint64_t now_ns, const Sink& sink);
  // Emits Lost records for losses counted since the last call.
  void DrainLosses(uint64_t now_ns, const Sink& sink);

  const BpfCounters& counters() const { return counters_; }
  // When stay `b`, still on record at `now_ns`, ended: now if its thread is
  // blocked still, its wakeup if it waits for a CPU, or when it began
  // running if it did though no switch to it was reported (`runtime_ns`,
  // the thread's CPU time now, is past the stay's). b.start_ns when it
  // never was a stay.
  static uint64_t StayEnd(const profcpu_blocked& b, std::optional<uint64_t> runtime_ns,
                          uint64_t now_ns);
  // The `blocked` map (for tests that stage a stay whose switch went unreported).
  int BlockedMapFdForTesting() const;
  // Runs of the programs the kernel skipped (bpf_prog_info.recursion_misses:
  // a program already running on that CPU), summed over the programs.
  uint64_t ProgramMisses() const;
  // What libbpf said while loading (the verifier's log on failure).
  static std::string LibbpfLog();

 private:
  explicit BpfSession(const BpfOptions& options)
      : options_(options), next_inline_stack_id_(kFirstInlineStackId) {}
  // Ids of inline stacks start above every stack map id, so the two kinds
  // share one StackTrace id space (-mode wall with -backend bpf has both).
  static constexpr int32_t kFirstInlineStackId = 1 << 24;
  absl::Status Load();
  absl::Status Failure(int error, absl::string_view step) const;
  // The recording's id for an inline stack, writing its StackTrace record
  // the first time that stack is seen; kNoStack for an empty one.
  int32_t InlineStackId(const std::vector<uint64_t>& ips, bool kernel, uint64_t time_ns,
                        const Sink& sink);
  void OnSwitchOut(SwitchOutEvent& event, const Sink& sink);
  void OnSample(const SampleEvent& event, const Sink& sink);
  // Fills `off`'s stacks, registers and stack copy from thread `tid`'s
  // pending stay, if it has one, and forgets the stay.
  void TakePendingStay(uint32_t tid, recording::OffCpuSample* off);
  static int OnEvent(void* context, void* data, size_t size);

  BpfOptions options_;
  bool can_snapshot_ = false;  // snapshot_blocked is loaded
  profcpu_bpf* skeleton_ = nullptr;
  ring_buffer* ring_ = nullptr;
  std::vector<bpf_link*> links_;
  // Inline stacks seen so far, by (kernel flag, addresses) bytes,
  // with the id their StackTrace record got; emptied when it grows too big
  // (a stack seen again later is then written again under a new id).
  absl::flat_hash_map<std::string, int32_t> inline_stacks_;
  int32_t next_inline_stack_id_;
  // Threads switched out and not yet run again: their stacks' ids, and
  // with leaf_copy their user registers and stack copy.
  struct PendingStay {
    int32_t kernel_stack;
    int32_t user_stack;
    std::vector<uint64_t> user_regs;
    std::string user_stack_copy;
  };
  absl::flat_hash_map<uint32_t, PendingStay> pending_stays_;
  SwitchOutEvent switch_out_;  // the event being decoded (buffers reused)
  SampleEvent sample_;
  SampleCounts sample_counts_;  // on-CPU samples since the last DrainCounts
  uint64_t losses_reported_[PROFCPU_LOSS_COUNT] = {};
  BpfCounters counters_;
  const Sink* draining_sink_ = nullptr;  // set while DrainEvents runs
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_BPF_BPF_SESSION_H_
