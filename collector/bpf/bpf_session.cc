#include "collector/bpf/bpf_session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "base/status_macros.h"
#include "base/unique_fd.h"
#include "collector/bpf/bpf_support.h"
#include "collector/bpf/profcpu_bpf.skel.h"

namespace profcpu::collector {
namespace {

// The last words libbpf printed (its log goes through one global callback).
constexpr size_t kMaxLibbpfLog = 16 << 10;
std::mutex g_log_mutex;
std::string* g_libbpf_log = new std::string;

int CaptureLibbpfLog(libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[1024];
  int n = std::vsnprintf(line, sizeof(line), format, args);
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_libbpf_log->append(line, n < 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), sizeof(line) - 1));
  if (g_libbpf_log->size() > kMaxLibbpfLog) {
    g_libbpf_log->erase(0, g_libbpf_log->size() - kMaxLibbpfLog);
  }
  return n;
}

recording::LossReason LossReasonOf(int index) {
  switch (index) {
    case PROFCPU_LOSS_RINGBUF:
      return recording::LossReason::kBpfRingBufferFull;
    case PROFCPU_LOSS_STACK:
      return recording::LossReason::kStackLost;
    case PROFCPU_LOSS_MISSED_SWITCH:
      return recording::LossReason::kOffCpuUnended;
    default:
      return recording::LossReason::kBpfMapFull;
  }
}

// linux/perf_event.h: call chain entries from here up are context markers.
constexpr uint64_t kPerfContextMax = static_cast<uint64_t>(-4095);

// perf_event.h's PERF_SAMPLE_REGS_ABI_64: the user registers are 64-bit ones.
constexpr uint32_t kRegsAbi64 = 2;

// Distinct inline stacks remembered before the table starts over: bounds
// profcpu's memory on a long whole-machine run (a few hundred bytes each,
// at most about 1 KB: some 70 MB in the worst case).
constexpr size_t kMaxInlineStacks = 1 << 16;

// Appends the addresses of a stack, leaving out perf's context markers: on
// perf events that sample call chains, bpf_get_stack reuses perf's chain,
// PERF_CONTEXT_KERNEL and _USER included (kernel/bpf/stackmap.c,
// bpf_get_stack_pe); the perf record parser drops them too.
void AppendAddresses(const uint64_t* ips, size_t count, std::vector<uint64_t>* out) {
  for (size_t i = 0; i < count; ++i) {
    if (ips[i] == 0) break;  // the kernel zero-fills past the stack's depth
    if (ips[i] >= kPerfContextMax) continue;
    out->push_back(ips[i]);
  }
}

// The CPU time thread `tid` of process `pid` (profcpu's pid namespace) has
// run, in ns: /proc's schedstat starts with se.sum_exec_runtime, the field
// the programs keep in profcpu_blocked::runtime_ns. nullopt if it is gone.
std::optional<uint64_t> ThreadRuntimeNs(uint32_t pid, uint32_t tid) {
  auto stat =
      base::ReadFileBounded(absl::StrCat("/proc/", pid, "/task/", tid, "/schedstat"), 4096);
  uint64_t runtime;
  if (!stat.ok() || !absl::SimpleAtoi(absl::string_view(*stat).substr(0, stat->find(' ')),
                                      &runtime)) {
    return std::nullopt;
  }
  return runtime;
}

uint64_t NextPowerOfTwo(uint64_t value) {
  uint64_t power = 1;
  while (power < value) power <<= 1;
  return power;
}

}  // namespace

uint64_t BpfSession::RingBufferBytes(double samples_per_second, int cpus, int max_stack_depth) {
  constexpr uint64_t kMin = 4 << 20;
  constexpr uint64_t kMax = 256 << 20;
  const double event_bytes = sizeof(profcpu_sample_inline) +
                             2.0 * std::clamp(max_stack_depth, 1, PROFCPU_MAX_STACK_DEPTH) * 8;
  const double wanted = samples_per_second * std::max(cpus, 1) * event_bytes * 0.4;
  if (!(wanted < static_cast<double>(kMax))) return kMax;  // also NaN
  return std::clamp(NextPowerOfTwo(static_cast<uint64_t>(wanted)), kMin, kMax);
}

std::string BpfSession::LibbpfLog() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  return *g_libbpf_log;
}

absl::StatusOr<std::unique_ptr<BpfSession>> BpfSession::Open(const BpfOptions& options) {
  BpfFacts facts = GatherBpfFacts();
  std::string blocker = BpfBlocker(facts, options.what);
  if (!blocker.empty()) {
    // Unimplemented: this kernel lacks what is needed (as for a missing perf event).
    return facts.has_btf && facts.kernel_major != 0 ? absl::PermissionDeniedError(blocker)
                                                    : absl::UnimplementedError(blocker);
  }
  auto session = std::unique_ptr<BpfSession>(new BpfSession(options));
  PROFCPU_RETURN_IF_ERROR(session->Load());
  return session;
}

absl::Status BpfSession::Failure(int error, absl::string_view step) const {
  std::string message = ExplainBpfFailure(GatherBpfFacts(), error, step, options_.what);
  if (error == EPERM || error == EACCES) return absl::PermissionDeniedError(message);
  if (error == EINVAL || error == ENOENT || error == EOPNOTSUPP || error == E2BIG) {
    return absl::UnimplementedError(message);
  }
  return absl::InternalError(message);
}

absl::Status BpfSession::Load() {
  libbpf_set_print(CaptureLibbpfLog);
  skeleton_ = profcpu_bpf__open();
  if (skeleton_ == nullptr) return Failure(errno, "open");
  skeleton_->rodata->kernel_stacks = options_.kernel_stacks;
  skeleton_->rodata->scope = options_.scope;
  skeleton_->rodata->cgroup_id = options_.cgroup_id;
  skeleton_->rodata->cgroup_level = options_.cgroup_level;
  // Pids in events as profcpu's pid namespace numbers them (see profcpu.bpf.c).
  struct stat pidns;
  if (::stat("/proc/self/ns/pid", &pidns) != 0) return Failure(errno, "stat /proc/self/ns/pid");
  skeleton_->rodata->pidns_dev = pidns.st_dev;
  skeleton_->rodata->pidns_ino = pidns.st_ino;
  skeleton_->rodata->inline_stack_bytes =
      static_cast<uint32_t>(std::clamp(options_.max_stack_depth, 1, PROFCPU_MAX_STACK_DEPTH)) *
      sizeof(uint64_t);
  bpf_map__set_max_entries(skeleton_->maps.events,
                           static_cast<uint32_t>(std::clamp<uint64_t>(
                               NextPowerOfTwo(options_.ring_buffer_bytes), 4096, 1u << 30)));
  // bpf_copy_from_user_task and sleepable task iterators: Linux 5.18.
  const BpfFacts facts = GatherBpfFacts();
  // bpf_task_pt_regs: Linux 5.15. Before, switch-outs go without the copy.
  if (facts.kernel_major < 5 || (facts.kernel_major == 5 && facts.kernel_minor < 15)) {
    options_.leaf_copy = false;
  }
  skeleton_->rodata->leaf_copy = options_.leaf_copy;
  can_snapshot_ = options_.offcpu && (facts.kernel_major > 5 ||
                                      (facts.kernel_major == 5 && facts.kernel_minor >= 18));
  if (!can_snapshot_) bpf_program__set_autoload(skeleton_->progs.snapshot_blocked, false);
  // Maps a mode does not use shrink to one entry (hash maps are preallocated).
  if (!options_.offcpu) {
    bpf_program__set_autoload(skeleton_->progs.on_switch, false);
    bpf_program__set_autoload(skeleton_->progs.on_fork, false);
    bpf_program__set_autoload(skeleton_->progs.on_exit, false);
    bpf_program__set_autoload(skeleton_->progs.on_wakeup, false);
    bpf_map__set_max_entries(skeleton_->maps.blocked, 1);
    bpf_map__set_max_entries(skeleton_->maps.tgids, 1);
    bpf_map__set_max_entries(skeleton_->maps.requested, 1);
  }
  if (!options_.oncpu) bpf_program__set_autoload(skeleton_->progs.on_sample, false);
  int err = profcpu_bpf__load(skeleton_);
  if (err != 0) return Failure(-err, "load");
  ring_ = ring_buffer__new(bpf_map__fd(skeleton_->maps.events), &BpfSession::OnEvent, this,
                           nullptr);
  if (ring_ == nullptr) return Failure(errno, "ring buffer setup");
  return absl::OkStatus();
}

BpfSession::~BpfSession() {
  for (bpf_link* link : links_) bpf_link__destroy(link);
  if (ring_ != nullptr) ring_buffer__free(ring_);
  if (skeleton_ != nullptr) profcpu_bpf__destroy(skeleton_);
}

absl::Status BpfSession::TrackProcess(pid_t tgid) {
  uint32_t key = static_cast<uint32_t>(tgid);
  uint8_t one = 1;
  if (bpf_map_update_elem(bpf_map__fd(skeleton_->maps.requested), &key, &one, BPF_ANY) != 0) {
    return Failure(errno, absl::StrCat("tracking of process ", tgid));
  }
  return absl::OkStatus();
}

void BpfSession::IgnoreStaysBefore(uint64_t time_ns) {
  __atomic_store_n(&skeleton_->bss->min_start_ns, time_ns, __ATOMIC_RELAXED);
}

absl::Status BpfSession::AttachScheduler() {
  for (bpf_program* program : {skeleton_->progs.on_fork, skeleton_->progs.on_exit,
                               skeleton_->progs.on_wakeup, skeleton_->progs.on_switch}) {
    bpf_link* link = bpf_program__attach(program);
    if (link == nullptr) {
      return Failure(errno, absl::StrCat("attach to ", bpf_program__section_name(program)));
    }
    links_.push_back(link);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> BpfSession::SnapshotBlockedThreads(const Sink& sink) {
  if (!can_snapshot_) return 0;
  struct LinkDestroyer {
    void operator()(bpf_link* link) const { bpf_link__destroy(link); }
  };
  // Declared before the iterator's fd, so destroyed after it.
  std::unique_ptr<bpf_link, LinkDestroyer> link(
      bpf_program__attach_iter(skeleton_->progs.snapshot_blocked, nullptr));
  if (link == nullptr) return Failure(errno, "attach the blocked-thread snapshot");
  base::UniqueFd iter(bpf_iter_create(bpf_link__fd(link.get())));
  if (!iter.valid()) return Failure(errno, "start the blocked-thread snapshot");
  // Reading runs the program over the tasks; it writes a profcpu_blocked
  // per thread it records, and each read returns with a buffer full.
  uint64_t bytes = 0;
  std::vector<char> buffer(64 * 1024);
  while (true) {
    const ssize_t got = ::read(iter.get(), buffer.data(), buffer.size());
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return Failure(errno, "run the blocked-thread snapshot");
    }
    bytes += static_cast<uint64_t>(got);
    DrainEvents(sink);
  }
  return bytes / sizeof(profcpu_blocked);
}

absl::Status BpfSession::AttachToPerfEvent(int perf_event_fd) {
  bpf_link* link = bpf_program__attach_perf_event(skeleton_->progs.on_sample, perf_event_fd);
  if (link == nullptr) return Failure(errno, "attach to a perf event");
  links_.push_back(link);
  return absl::OkStatus();
}

int32_t BpfSession::InlineStackId(const std::vector<uint64_t>& ips, bool kernel,
                                  uint64_t time_ns, const Sink& sink) {
  if (ips.empty()) return recording::kNoStack;
  std::string key(1, kernel ? 'k' : 'u');
  key.append(reinterpret_cast<const char*>(ips.data()), ips.size() * sizeof(uint64_t));
  auto it = inline_stacks_.find(key);
  if (it != inline_stacks_.end()) return it->second;
  if (inline_stacks_.size() >= kMaxInlineStacks) inline_stacks_.clear();
  if (next_inline_stack_id_ == INT32_MAX) return recording::kNoStack;  // 2 billion stacks
  int32_t id = next_inline_stack_id_++;
  inline_stacks_.emplace(std::move(key), id);
  ++counters_.stacks;
  recording::StackTrace trace;
  trace.time_ns = time_ns;
  trace.id = static_cast<uint32_t>(id);
  trace.kernel = kernel;
  AppendAddresses(ips.data(), ips.size(), &trace.ips);
  trace.truncated = ips.size() * sizeof(uint64_t) == skeleton_->rodata->inline_stack_bytes;
  sink(std::move(trace));
  return id;
}

void BpfSession::OnSwitchOut(SwitchOutEvent& event, const Sink& sink) {
  PendingStay stay;
  stay.kernel_stack = InlineStackId(event.stacks.kernel, /*kernel=*/true, event.time_ns, sink);
  stay.user_stack = InlineStackId(event.stacks.user, /*kernel=*/false, event.time_ns, sink);
  if (!event.user_regs.empty()) {
    ++counters_.leaf_copies;
    stay.user_regs = std::move(event.user_regs);
    stay.user_stack_copy = std::move(event.user_stack_copy);
  }
  // A thread blocks again only after running: a stay still pending here
  // lost its ending event (a full ring buffer, counted there).
  pending_stays_[event.tid] = std::move(stay);
}

void BpfSession::OnSample(const SampleEvent& event, const Sink& sink) {
  const int32_t kernel_stack =
      InlineStackId(event.stacks.kernel, /*kernel=*/true, event.time_ns, sink);
  const int32_t user_stack =
      InlineStackId(event.stacks.user, /*kernel=*/false, event.time_ns, sink);
  ++counters_.samples;
  if (!options_.timestamps) {
    sample_counts_.Add(event.pid, event.tid, event.cpu, kernel_stack, user_stack, event.period);
    return;
  }
  recording::StackSample sample;
  sample.time_ns = event.time_ns;
  sample.pid = event.pid;
  sample.tid = event.tid;
  sample.cpu = event.cpu;
  sample.count = 1;
  sample.period = event.period;
  sample.kernel_stack = kernel_stack;
  sample.user_stack = user_stack;
  sink(std::move(sample));
}

void BpfSession::TakePendingStay(uint32_t tid, recording::OffCpuSample* off) {
  off->kernel_stack = off->user_stack = recording::kNoStack;
  auto it = pending_stays_.find(tid);
  if (it == pending_stays_.end()) return;
  off->kernel_stack = it->second.kernel_stack;
  off->user_stack = it->second.user_stack;
  if (!it->second.user_regs.empty()) {
    off->user_regs_abi = kRegsAbi64;
    off->user_regs = std::move(it->second.user_regs);
    off->user_stack_copy = std::move(it->second.user_stack_copy);
  }
  pending_stays_.erase(it);
}

int BpfSession::OnEvent(void* context, void* data, size_t size) {
  auto* self = static_cast<BpfSession*>(context);
  if (self->draining_sink_ == nullptr || size < sizeof(uint32_t)) return 0;
  const Sink& sink = *self->draining_sink_;
  uint32_t kind;
  std::memcpy(&kind, data, sizeof(kind));
  // Events that are not what the programs write are skipped.
  if (kind == PROFCPU_EVENT_SAMPLE_INLINE) {
    if (DecodeSample(data, size, &self->sample_)) self->OnSample(self->sample_, sink);
    return 0;
  }
  if (kind == PROFCPU_EVENT_SWITCH_OUT) {
    if (DecodeSwitchOut(data, size, &self->switch_out_)) self->OnSwitchOut(self->switch_out_, sink);
    return 0;
  }
  if (size < sizeof(profcpu_event)) return 0;
  profcpu_event e;
  std::memcpy(&e, data, sizeof(e));
  if (e.kind == PROFCPU_EVENT_OFFCPU) {
    recording::OffCpuSample off;
    off.time_ns = e.time_ns;
    off.duration_ns = e.value;
    off.pid = e.pid;
    off.tid = e.tid;
    off.cpu = e.cpu;
    off.state = e.state;
    // Its stacks came when it switched out; none if that event was lost.
    self->TakePendingStay(e.tid, &off);
    ++self->counters_.offcpu_events;
    sink(std::move(off));
  }
  return 0;
}

void BpfSession::DrainEvents(const Sink& sink) {
  draining_sink_ = &sink;
  ring_buffer__consume(ring_);
  draining_sink_ = nullptr;
}

uint64_t BpfSession::StayEnd(const profcpu_blocked& b, std::optional<uint64_t> runtime_ns,
                              uint64_t now_ns) {
  if (runtime_ns.has_value() && *runtime_ns > b.runtime_ns) {
    // It ran since it switched out, though no switch to it was reported
    // (see flush_missed_switch_in in profcpu.bpf.c), and is running still
    // (switching out would have replaced the entry): it has been on the CPU
    // for the CPU time it gained. A snapshot that raced with the thread's
    // wakeup ends so too, right where it began: nothing is reported.
    const uint64_t ran = *runtime_ns - b.runtime_ns;
    return ran < now_ns ? std::max<uint64_t>(now_ns - ran, b.start_ns) : b.start_ns;
  }
  // Woken, not run yet: it waits for a CPU; the stay ends at the wakeup, as
  // the programs end it. Otherwise it is blocked still.
  return b.woken_ns > b.start_ns ? std::min<uint64_t>(b.woken_ns, now_ns) : now_ns;
}

void BpfSession::ReportStaysInProgress(uint64_t now_ns, const Sink& sink) {
  if (!options_.offcpu) return;
  const int fd = bpf_map__fd(skeleton_->maps.blocked);
  const uint64_t min_start = __atomic_load_n(&skeleton_->bss->min_start_ns, __ATOMIC_RELAXED);
  // The programs still run: a key may vanish under the walk, and the walk
  // then starts over from the first key. The set skips what was reported,
  // the bound ends a walk that keeps starting over.
  absl::flat_hash_set<uint32_t> seen;
  const uint32_t max_steps = 2 * bpf_map__max_entries(skeleton_->maps.blocked);
  uint32_t key = 0;
  bool first = true;
  for (uint32_t step = 0; step < max_steps; ++step) {
    uint32_t next;
    if (bpf_map_get_next_key(fd, first ? nullptr : &key, &next) != 0) break;
    first = false;
    key = next;
    profcpu_blocked b;
    if (!seen.insert(key).second || bpf_map_lookup_elem(fd, &key, &b) != 0) continue;
    const uint64_t end = StayEnd(b, ThreadRuntimeNs(b.pid, b.tid), now_ns);
    if (b.start_ns < min_start || b.start_ns >= end) continue;
    recording::OffCpuSample off;
    off.time_ns = end;
    off.duration_ns = end - b.start_ns;
    off.pid = b.pid;
    off.tid = b.tid;
    off.cpu = b.cpu;
    off.state = b.state;
    TakePendingStay(b.tid, &off);
    ++counters_.offcpu_events;
    ++counters_.stays_in_progress;
    sink(std::move(off));
  }
}

void BpfSession::DrainCounts(uint64_t now_ns, const Sink& sink) {
  sample_counts_.Flush(now_ns, sink);
}

int BpfSession::BlockedMapFdForTesting() const { return bpf_map__fd(skeleton_->maps.blocked); }

uint64_t BpfSession::ProgramMisses() const {
  uint64_t misses = 0;
  for (bpf_program* program : {skeleton_->progs.on_switch, skeleton_->progs.on_fork,
                               skeleton_->progs.on_exit, skeleton_->progs.on_wakeup,
                               skeleton_->progs.on_sample}) {
    int fd = bpf_program__fd(program);
    if (fd < 0) continue;  // not loaded in this mode
    bpf_prog_info info = {};
    uint32_t length = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &length) == 0) misses += info.recursion_misses;
  }
  return misses;
}

void BpfSession::DrainLosses(uint64_t now_ns, const Sink& sink) {
  counters_.leaf_copies_failed =
      __atomic_load_n(&skeleton_->bss->leaf_copies_failed, __ATOMIC_RELAXED);
  for (int i = 0; i < PROFCPU_LOSS_COUNT; ++i) {
    uint64_t total = __atomic_load_n(&skeleton_->bss->losses[i], __ATOMIC_RELAXED);
    counters_.losses[i] = total;
    if (total == losses_reported_[i]) continue;
    recording::Lost lost;
    lost.time_ns = now_ns;
    lost.count = total - losses_reported_[i];
    lost.reason = LossReasonOf(i);
    losses_reported_[i] = total;
    sink(std::move(lost));
  }
}

}  // namespace profcpu::collector
