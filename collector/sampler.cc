#include "collector/sampler.h"

#include <poll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collector/perf/perf_event.h"
#include "collector/proc/proc_reader.h"

namespace profcpu::collector {
namespace {

// Each thread needs one descriptor per CPU: lift the soft limit as far as
// the hard limit allows, as perf does, before a big process exhausts it.
void RaiseOpenFileLimit() {
  rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// Attaching races with thread creation; a handful of rescans settles it.
constexpr int kMaxAttachRounds = 20;

// What the parser finds in a sample beyond kSampleType's fields.
SampleLayout LayoutOf(const SamplerOptions& options) {
  if (options.dwarf_stack_size > 0) {
    return {kDwarfRegsMask, /*stack_user=*/true, /*user_chain=*/false,
            /*trim_to_frame_record=*/false};
  }
  if (options.leaf_stack_size > 0) {
    return {kLeafRegsMask, /*stack_user=*/true, /*user_chain=*/true,
            /*trim_to_frame_record=*/true};
  }
  return {};
}

}  // namespace

absl::StatusOr<std::unique_ptr<Sampler>> Sampler::Create(const SamplerOptions& options,
                                                         Sink sink) {
  long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
  if (cpus <= 0) return absl::InternalError("cannot count CPUs");
  if (options.rate == 0) return absl::InvalidArgumentError("sampling rate must be positive");
  RaiseOpenFileLimit();
  return std::unique_ptr<Sampler>(
      new Sampler(options, std::move(sink), static_cast<int>(cpus), PerfEventMaxStack()));
}

Sampler::Sampler(const SamplerOptions& options, Sink sink, int cpus, int max_stack)
    : options_(options),
      sink_(std::move(sink)),
      cpus_(cpus),
      kernel_stacks_(options.kernel_stacks),
      parser_(max_stack, LayoutOf(options)),
      buffers_(static_cast<size_t>(cpus)) {}

Sampler::~Sampler() = default;

perf_event_attr Sampler::MakeAttr() const {
  perf_event_attr attr = {};
  attr.size = sizeof(attr);
  attr.type = options_.event.type;
  attr.config = options_.event.config;
  if (options_.frequency_mode) {
    attr.freq = 1;
    attr.sample_freq = options_.rate;
  } else {
    attr.sample_period = options_.rate;
  }
  attr.sample_type = kSampleType;
  if (options_.dwarf_stack_size > 0) {
    // As perf --call-graph dwarf: user registers and stack for unwinding
    // later; the kernel follows kernel chains only.
    attr.sample_type = kDwarfSampleType;
    attr.sample_regs_user = kDwarfRegsMask;
    attr.sample_stack_user = options_.dwarf_stack_size;
    attr.exclude_callchain_user = 1;
  } else if (options_.leaf_stack_size > 0) {
    // Frame-pointer chains, plus what repairs their leaf after collection.
    attr.sample_type = kDwarfSampleType;
    attr.sample_regs_user = kLeafRegsMask;
    attr.sample_stack_user = options_.leaf_stack_size;
  }
  attr.disabled = options_.enable_on_exec ? 1 : 0;
  attr.enable_on_exec = options_.enable_on_exec ? 1 : 0;
  attr.inherit = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.sample_id_all = 1;
  attr.exclude_hv = 1;
  attr.exclude_kernel = kernel_stacks_ ? 0 : 1;
  attr.exclude_callchain_kernel = kernel_stacks_ ? 0 : 1;
  // jitdump records carry CLOCK_MONOTONIC times; sample on the same clock.
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  // Wake the reader when a quarter of the buffer is used, well before it fills.
  attr.watermark = 1;
  attr.wakeup_watermark =
      static_cast<uint32_t>(options_.ring_buffer_pages * ::sysconf(_SC_PAGESIZE) / 4);
  return attr;
}

absl::Status Sampler::OpenOnCpu(pid_t target, int cpu, unsigned long flags, bool inherit) {
  perf_event_attr attr = MakeAttr();
  attr.inherit = inherit ? 1 : 0;
  auto fd = OpenPerfEvent(attr, target, cpu, options_.event.name, flags);
  if (absl::IsPermissionDenied(fd.status()) && kernel_stacks_ && events_.empty()) {
    // Like perf, fall back to user space only rather than failing outright.
    absl::Status with_kernel = fd.status();
    kernel_stacks_ = false;
    attr = MakeAttr();
    attr.inherit = inherit ? 1 : 0;
    fd = OpenPerfEvent(attr, target, cpu, options_.event.name, flags);
    // If even that fails, the first error names everything that is missing.
    if (!fd.ok()) return with_kernel;
    warnings_.push_back(absl::StrCat("kernel frames omitted (user space only): ",
                                     with_kernel.message()));
  }
  if (!fd.ok()) return fd.status();
  if (options_.on_event_opened) PROFCPU_RETURN_IF_ERROR(options_.on_event_opened(fd->get()));
  std::unique_ptr<RingBuffer>& buffer = buffers_[static_cast<size_t>(cpu)];
  if (buffer == nullptr) {
    PROFCPU_ASSIGN_OR_RETURN(buffer, RingBuffer::Map(fd->get(), options_.ring_buffer_pages));
  } else {
    PROFCPU_RETURN_IF_ERROR(RedirectOutput(fd->get(), buffer->fd()));
  }
  events_.push_back(std::move(*fd));
  return absl::OkStatus();
}

absl::Status Sampler::AttachThread(pid_t tid) {
  for (int cpu = 0; cpu < cpus_; ++cpu) {
    PROFCPU_RETURN_IF_ERROR(OpenOnCpu(tid, cpu, /*flags=*/0, /*inherit=*/true));
  }
  attached_.insert(tid);
  return absl::OkStatus();
}

absl::Status Sampler::AttachCpus(int cgroup_fd) {
  // Per-CPU events see every task scheduled on their CPU (or, for a cgroup
  // event, every task of that cgroup and its descendants); tasks created
  // later are covered without inheritance, which per-CPU events do not use.
  for (int cpu = 0; cpu < cpus_; ++cpu) {
    PROFCPU_RETURN_IF_ERROR(OpenOnCpu(cgroup_fd, cpu,
                                      cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0,
                                      /*inherit=*/false));
  }
  return absl::OkStatus();
}

absl::Status Sampler::AttachProcess(pid_t pid) {
  for (int round = 0; round < kMaxAttachRounds; ++round) {
    PROFCPU_ASSIGN_OR_RETURN(std::vector<pid_t> tids, ListThreads(pid));
    std::vector<pid_t> fresh;
    for (pid_t tid : tids) {
      if (!attached_.contains(tid)) fresh.push_back(tid);
    }
    if (fresh.empty()) return absl::OkStatus();
    if (round > 0) {
      // Threads created after their creator was attached already carry an
      // inherited event; the FORK record says so. Give the kernel a moment to
      // finish copy_process() (it reports the fork after the thread shows up
      // in /proc), then read the buffers to see those records.
      ::usleep(2000);
      Drain();
    }
    for (pid_t tid : fresh) {
      if (forked_.contains(tid)) {
        attached_.insert(tid);
        continue;
      }
      absl::Status status = AttachThread(tid);
      if (absl::IsNotFound(status)) {
        if (tid == pid && attached_.empty()) {
          return absl::NotFoundError(absl::StrCat("process ", pid, " exited"));
        }
        continue;  // the thread ended meanwhile
      }
      PROFCPU_RETURN_IF_ERROR(status);
    }
  }
  warnings_.push_back(absl::StrCat("process ", pid,
                                   " kept creating threads while profcpu attached; a thread "
                                   "created in the last moment may be missing"));
  return absl::OkStatus();
}

void Sampler::Wait(int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<size_t> index;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (buffers_[i] != nullptr && !hung_up_.contains(i)) {
      fds.push_back({buffers_[i]->fd(), POLLIN, 0});
      index.push_back(i);
    }
  }
  if (fds.empty()) {
    ::usleep(static_cast<useconds_t>(timeout_ms) * 1000);
    return;
  }
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return;
  for (size_t i = 0; i < fds.size(); ++i) {
    // The thread the buffer's first event watched has exited: poll would
    // report that forever. Keep draining the buffer, but stop polling it.
    if (fds[i].revents & (POLLHUP | POLLERR)) hung_up_.insert(index[i]);
  }
}

void Sampler::Drain() {
  for (auto& buffer : buffers_) {
    if (buffer == nullptr) continue;
    buffer->Drain([this](absl::string_view bytes) {
      std::optional<recording::Record> record = parser_.Parse(bytes);
      if (!record.has_value()) return;
      if (auto* fork = std::get_if<recording::Fork>(&*record)) {
        forked_.insert(static_cast<pid_t>(fork->tid));
      } else if (std::holds_alternative<recording::Sample>(*record)) {
        ++counters_.samples;
      } else if (auto* lost = std::get_if<recording::Lost>(&*record)) {
        if (lost->reason != recording::LossReason::kThrottled) counters_.lost += lost->count;
      }
      sink_(std::move(*record));
    });
  }
  counters_.malformed = parser_.malformed();
}

void Sampler::DisableAll() {
  for (const auto& fd : events_) (void)DisableEvent(fd.get());
}

}  // namespace profcpu::collector
