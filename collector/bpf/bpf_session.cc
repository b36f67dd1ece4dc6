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
#include <mutex>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "base/status_macros.h"
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

// Entries read per batch when draining the counts map.
constexpr uint32_t kCountBatch = 1024;

// Distinct inline stacks remembered before the table starts over: bounds
// profcpu's memory on a long whole-machine run (a few hundred bytes each,
// at most about 1 KB: some 70 MB in the worst case).
constexpr size_t kMaxInlineStacks = 1 << 16;

// Appends the addresses of a stack, leaving out perf's context markers: on
// perf events that sample call chains, bpf_get_stackid reuses perf's chain,
// PERF_CONTEXT_KERNEL and _USER included (kernel/bpf/stackmap.c,
// bpf_get_stackid_pe); the perf record parser drops them too.
void AppendAddresses(const uint64_t* ips, size_t count, std::vector<uint64_t>* out) {
  for (size_t i = 0; i < count; ++i) {
    if (ips[i] == 0) break;  // the kernel zero-fills past the stack's depth
    if (ips[i] >= kPerfContextMax) continue;
    out->push_back(ips[i]);
  }
}

// Whether thread `tid` of process `pid` (profcpu's pid namespace) is
// running or runnable now, by /proc's state letter.
bool IsRunning(uint32_t pid, uint32_t tid) {
  auto stat = base::ReadFileBounded(absl::StrCat("/proc/", pid, "/task/", tid, "/stat"), 4096);
  if (!stat.ok()) return false;
  // "tid (comm) S ...": the comm may hold ") ", the last one ends it.
  const size_t end = stat->rfind(") ");
  return end != std::string::npos && end + 2 < stat->size() && (*stat)[end + 2] == 'R';
}

int32_t StackIdOf(__s32 id) { return id < 0 ? recording::kNoStack : id; }

recording::StackSample StackSampleOf(uint32_t pid, uint32_t tid, uint32_t cpu, __s32 kernel_stack,
                                     __s32 user_stack) {
  recording::StackSample sample;
  sample.pid = pid;
  sample.tid = tid;
  sample.cpu = cpu;
  sample.kernel_stack = StackIdOf(kernel_stack);
  sample.user_stack = StackIdOf(user_stack);
  return sample;
}

}  // namespace

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
  skeleton_->rodata->timestamps = options_.timestamps;
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
  bpf_map__set_value_size(skeleton_->maps.stacks,
                          static_cast<uint32_t>(options_.max_stack_depth) * sizeof(uint64_t));
  bpf_map__set_max_entries(skeleton_->maps.stacks, options_.stack_map_entries);
  // bpf_copy_from_user_task and sleepable task iterators: Linux 5.18.
  const BpfFacts facts = GatherBpfFacts();
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
  if (!options_.oncpu) {
    // Off-CPU stacks travel inline: only on-CPU sampling uses the stack map.
    bpf_program__set_autoload(skeleton_->progs.on_sample, false);
    bpf_map__set_max_entries(skeleton_->maps.stacks, 1);
  }
  if (!options_.oncpu || options_.timestamps) bpf_map__set_max_entries(skeleton_->maps.counts, 1);
  int err = profcpu_bpf__load(skeleton_);
  if (err != 0) return Failure(-err, "load");
  ring_ = ring_buffer__new(bpf_map__fd(skeleton_->maps.events), &BpfSession::OnEvent, this,
                           nullptr);
  if (ring_ == nullptr) return Failure(errno, "ring buffer setup");
  stack_buffer_.resize(static_cast<size_t>(options_.max_stack_depth));
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
  bpf_link* link = bpf_program__attach_iter(skeleton_->progs.snapshot_blocked, nullptr);
  if (link == nullptr) return Failure(errno, "attach the blocked-thread snapshot");
  absl::Status status;
  uint64_t bytes = 0;
  const int fd = bpf_iter_create(bpf_link__fd(link));
  if (fd < 0) {
    status = Failure(errno, "start the blocked-thread snapshot");
  } else {
    // Reading runs the program over the tasks; it writes a profcpu_blocked
    // per thread it records, and each read returns with a buffer full.
    std::vector<char> buffer(64 * 1024);
    while (true) {
      const ssize_t got = ::read(fd, buffer.data(), buffer.size());
      if (got == 0) break;
      if (got < 0) {
        if (errno == EINTR) continue;
        status = Failure(errno, "run the blocked-thread snapshot");
        break;
      }
      bytes += static_cast<uint64_t>(got);
      DrainEvents(sink);
    }
    ::close(fd);
  }
  bpf_link__destroy(link);
  if (!status.ok()) return status;
  return bytes / sizeof(profcpu_blocked);
}

absl::Status BpfSession::AttachToPerfEvent(int perf_event_fd) {
  bpf_link* link = bpf_program__attach_perf_event(skeleton_->progs.on_sample, perf_event_fd);
  if (link == nullptr) return Failure(errno, "attach to a perf event");
  links_.push_back(link);
  return absl::OkStatus();
}

void BpfSession::EmitStack(int32_t id, bool kernel, uint64_t time_ns, const Sink& sink) {
  if (id < 0 || stacks_written_.contains(id)) return;
  // Entries are never deleted or reused (no BPF_F_REUSE_STACKID), so an id
  // names the same stack for the whole run: read it once.
  std::fill(stack_buffer_.begin(), stack_buffer_.end(), 0);
  if (bpf_map_lookup_elem(bpf_map__fd(skeleton_->maps.stacks), &id, stack_buffer_.data()) != 0) {
    return;  // the record naming it counts as missing a stack at replay
  }
  stacks_written_.insert(id);
  ++counters_.stacks;
  recording::StackTrace trace;
  trace.time_ns = time_ns;
  trace.id = static_cast<uint32_t>(id);
  trace.kernel = kernel;
  AppendAddresses(stack_buffer_.data(), stack_buffer_.size(), &trace.ips);
  trace.truncated = trace.ips.size() == stack_buffer_.size();
  sink(std::move(trace));
}

int32_t BpfSession::InlineStackId(const uint64_t* ips, size_t count, bool kernel,
                                  uint64_t time_ns, const Sink& sink) {
  if (count == 0) return recording::kNoStack;
  std::string key(1, kernel ? 'k' : 'u');
  key.append(reinterpret_cast<const char*>(ips), count * sizeof(uint64_t));
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
  AppendAddresses(ips, count, &trace.ips);
  trace.truncated = count * sizeof(uint64_t) == skeleton_->rodata->inline_stack_bytes;
  sink(std::move(trace));
  return id;
}

void BpfSession::OnSwitchOut(const profcpu_switch_out& header, const uint64_t* ips,
                             const Sink& sink) {
  const size_t kernel_count = header.kernel_bytes / sizeof(uint64_t);
  const size_t user_count = header.user_bytes / sizeof(uint64_t);
  PendingStay stay;
  stay.kernel_stack = InlineStackId(ips, kernel_count, /*kernel=*/true, header.time_ns, sink);
  stay.user_stack =
      InlineStackId(ips + kernel_count, user_count, /*kernel=*/false, header.time_ns, sink);
  // A thread blocks again only after running: a stay still pending here
  // lost its ending event (a full ring buffer, counted there).
  pending_stays_[header.tid] = stay;
}

int BpfSession::OnEvent(void* context, void* data, size_t size) {
  auto* self = static_cast<BpfSession*>(context);
  if (self->draining_sink_ == nullptr || size < sizeof(uint32_t)) return 0;
  const Sink& sink = *self->draining_sink_;
  uint32_t kind;
  std::memcpy(&kind, data, sizeof(kind));
  if (kind == PROFCPU_EVENT_SWITCH_OUT) {
    profcpu_switch_out header;
    if (size < sizeof(header)) return 0;
    std::memcpy(&header, data, sizeof(header));
    const size_t max_bytes = PROFCPU_MAX_STACK_DEPTH * sizeof(uint64_t);
    if (header.kernel_bytes > max_bytes || header.user_bytes > max_bytes ||
        header.kernel_bytes % sizeof(uint64_t) != 0 || header.user_bytes % sizeof(uint64_t) != 0 ||
        size < sizeof(header) + header.kernel_bytes + header.user_bytes) {
      return 0;  // not what the program writes
    }
    // Copied out: ring buffer records are only 8-byte aligned by contract.
    std::vector<uint64_t>& ips = self->inline_buffer_;
    ips.resize((header.kernel_bytes + header.user_bytes) / sizeof(uint64_t));
    std::memcpy(ips.data(), static_cast<const char*>(data) + sizeof(header),
                header.kernel_bytes + header.user_bytes);
    self->OnSwitchOut(header, ips.data(), sink);
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
    off.kernel_stack = off.user_stack = recording::kNoStack;
    if (auto it = self->pending_stays_.find(e.tid); it != self->pending_stays_.end()) {
      off.kernel_stack = it->second.kernel_stack;
      off.user_stack = it->second.user_stack;
      self->pending_stays_.erase(it);
    }
    ++self->counters_.offcpu_events;
    sink(std::move(off));
  } else if (e.kind == PROFCPU_EVENT_SAMPLE) {
    self->EmitStack(e.kernel_stack, /*kernel=*/true, e.time_ns, sink);
    self->EmitStack(e.user_stack, /*kernel=*/false, e.time_ns, sink);
    recording::StackSample sample =
        StackSampleOf(e.pid, e.tid, e.cpu, e.kernel_stack, e.user_stack);
    sample.time_ns = e.time_ns;
    sample.count = 1;
    sample.period = e.value;
    ++self->counters_.samples;
    sink(std::move(sample));
  }
  return 0;
}

void BpfSession::DrainEvents(const Sink& sink) {
  draining_sink_ = &sink;
  ring_buffer__consume(ring_);
  draining_sink_ = nullptr;
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
    // Woken but not seen running: it either waits for a CPU or ran without
    // the tracepoint saying so (see flush_missed_switch_in); end it at the
    // wakeup, as the programs do.
    const uint64_t end = b.woken_ns > b.start_ns ? std::min<uint64_t>(b.woken_ns, now_ns) : now_ns;
    if (b.start_ns < min_start || b.start_ns >= end) continue;
    // A snapshot that raced with the thread's wakeup leaves an entry for a
    // thread that has been running since (and never switched out to clear it).
    if ((b.flags & PROFCPU_BLOCKED_SNAPSHOT) != 0 && b.woken_ns == 0 && IsRunning(b.pid, b.tid)) {
      continue;
    }
    recording::OffCpuSample off;
    off.time_ns = end;
    off.duration_ns = end - b.start_ns;
    off.pid = b.pid;
    off.tid = b.tid;
    off.cpu = b.cpu;
    off.state = b.state;
    off.kernel_stack = off.user_stack = recording::kNoStack;
    if (auto it = pending_stays_.find(b.tid); it != pending_stays_.end()) {
      off.kernel_stack = it->second.kernel_stack;
      off.user_stack = it->second.user_stack;
      pending_stays_.erase(it);
    }
    ++counters_.offcpu_events;
    ++counters_.stays_in_progress;
    sink(std::move(off));
  }
}

absl::Status BpfSession::DrainCounts(uint64_t now_ns, const Sink& sink) {
  if (!options_.oncpu || options_.timestamps) return absl::OkStatus();
  int fd = bpf_map__fd(skeleton_->maps.counts);
  std::vector<profcpu_count_key> keys(kCountBatch);
  std::vector<profcpu_count_value> values(kCountBatch);
  uint32_t token = 0;
  bool first = true;
  // Counts only grow (nothing deletes entries, so nothing races with the
  // programs' increments): each read reports the growth since the last one.
  while (true) {
    uint32_t count = kCountBatch;
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    int err = bpf_map_lookup_batch(fd, first ? nullptr : &token, &token, keys.data(),
                                   values.data(), &count, &opts);
    if (err != 0 && err != -ENOENT) return Failure(-err, "read of the sample counts");
    for (uint32_t i = 0; i < count; ++i) {
      std::string key(reinterpret_cast<const char*>(&keys[i]), sizeof(profcpu_count_key));
      profcpu_count_value& last = last_counts_[key];
      if (values[i].count == last.count) continue;
      const profcpu_count_key& k = keys[i];
      EmitStack(k.kernel_stack, /*kernel=*/true, now_ns, sink);
      EmitStack(k.user_stack, /*kernel=*/false, now_ns, sink);
      recording::StackSample sample =
          StackSampleOf(k.pid, k.tid, k.cpu, k.kernel_stack, k.user_stack);
      sample.time_ns = now_ns;
      sample.count = values[i].count - last.count;
      sample.period = values[i].period - last.period;
      counters_.samples += sample.count;
      last = values[i];
      sink(std::move(sample));
    }
    if (err == -ENOENT) break;
    first = false;
  }
  return absl::OkStatus();
}

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
