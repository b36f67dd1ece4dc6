// Samples the threads of target processes with perf events: one event per
// thread per CPU, inherited by threads and processes they create, all writing
// into one ring buffer per CPU (as `perf record -p` does). perf_mmap() refuses
// inherited per-thread (cpu == -1) events, hence per-CPU events.
#ifndef PROFCPU_COLLECTOR_SAMPLER_H_
#define PROFCPU_COLLECTOR_SAMPLER_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "collector/perf/event_spec.h"
#include "collector/perf/perf_record_parser.h"
#include "collector/perf/ring_buffer.h"
#include "recording/records.h"

namespace profcpu::collector {

struct SamplerOptions {
  EventSpec event;
  bool frequency_mode = true;
  uint64_t rate = 99;          // Hz, or events per sample when !frequency_mode
  bool kernel_stacks = true;   // falls back to user-only if not permitted
  size_t ring_buffer_pages = 256;  // per CPU, power of two
  // Events start disabled and turn on when the target calls exec (record mode).
  bool enable_on_exec = false;
  // -callgraph dwarf: copy the user registers and this many bytes of user
  // stack with each sample (a multiple of 8, at most 65528) for unwinding
  // after collection, instead of frame-pointer user chains. 0: frame pointers.
  uint32_t dwarf_stack_size = 0;
  // -callgraph fp+cfi: frame-pointer chains, plus the user IP, SP, BP and up
  // to this many bytes of user stack with each sample (trimmed to what a
  // leaf repair can read: up to the first frame record), from which the
  // callers a frameless leaf hides are recovered after collection. 0: off.
  uint32_t leaf_stack_size = 0;
  // Called with each event opened, before it is used (the BPF backend
  // attaches its sampling program here); an error stops the attach.
  std::function<absl::Status(int event_fd)> on_event_opened;
};

struct SamplerCounters {
  uint64_t samples = 0;
  uint64_t lost = 0;  // ring-buffer losses plus dropped samples
  uint64_t malformed = 0;
};

class Sampler {
 public:
  using Sink = std::function<void(recording::Record&&)>;
  static absl::StatusOr<std::unique_ptr<Sampler>> Create(const SamplerOptions& options, Sink sink);
  ~Sampler();

  // Attaches to every thread of `pid`, including threads created while
  // attaching (already-inherited ones are recognised by their FORK records).
  absl::Status AttachProcess(pid_t pid);

  // Samples every task on every CPU (`cgroup_fd` < 0), or every task of the
  // cgroup `cgroup_fd` (an open cgroup v2 directory) and its descendants.
  absl::Status AttachCpus(int cgroup_fd);

  // Waits up to `timeout_ms` for a ring buffer to pass its wakeup watermark.
  void Wait(int timeout_ms);
  // Decodes every complete record in every ring buffer and passes it to the sink.
  void Drain();
  // Stops sampling (records already in the buffers can still be drained).
  void DisableAll();

  bool kernel_stacks() const { return kernel_stacks_; }
  const SamplerCounters& counters() const { return counters_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  size_t event_count() const { return events_.size(); }

 private:
  Sampler(const SamplerOptions& options, Sink sink, int cpus, int max_stack);
  perf_event_attr MakeAttr() const;
  // NotFound if the thread is gone.
  absl::Status AttachThread(pid_t tid);
  // One event on `cpu` for `target` (a tid, -1, or a cgroup fd with
  // PERF_FLAG_PID_CGROUP in `flags`), writing into that CPU's ring buffer.
  absl::Status OpenOnCpu(pid_t target, int cpu, unsigned long flags, bool inherit);

  SamplerOptions options_;
  Sink sink_;
  int cpus_;
  bool kernel_stacks_;
  PerfRecordParser parser_;
  std::vector<base::UniqueFd> events_;
  std::vector<std::unique_ptr<RingBuffer>> buffers_;  // one per CPU, null until first event
  absl::flat_hash_set<pid_t> attached_;
  absl::flat_hash_set<pid_t> forked_;
  absl::flat_hash_set<size_t> hung_up_;  // buffers whose poll reports POLLHUP  // threads the kernel reported creating (inherited)
  SamplerCounters counters_;
  std::vector<std::string> warnings_;
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_SAMPLER_H_
