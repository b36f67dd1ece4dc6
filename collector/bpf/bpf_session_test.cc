// Loads the real BPF programs into the running kernel (needs root, or
// CAP_BPF and CAP_PERFMON, and BTF) and checks what they record about this
// very process.
#include "collector/bpf/bpf_session.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <variant>
#include <vector>

#include "base/unique_fd.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {


pid_t Tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

void SleepMs(int ms) {
  timespec ts = {0, ms * 1'000'000L};
  ::nanosleep(&ts, nullptr);
}

TEST(BpfSessionTest, RecordsTimeOffCpuWithStacks) {
  BpfOptions options;
  options.offcpu = true;
  auto session = BpfSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << BpfSession::LibbpfLog();
  ASSERT_TRUE((*session)->AttachScheduler().ok());
  ASSERT_TRUE((*session)->TrackProcess(::getpid()).ok());

  std::atomic<pid_t> sleeper{0};
  timespec thread_start;
  std::thread thread([&] {
    ::clock_gettime(CLOCK_MONOTONIC, &thread_start);
    sleeper = Tid();
    for (int i = 0; i < 3; ++i) SleepMs(40);
  });
  thread.join();

  std::vector<recording::Record> records;
  (*session)->DrainEvents([&](recording::Record&& r) { records.push_back(std::move(r)); });
  std::vector<int32_t> stacks_seen;
  int long_sleeps = 0;
  for (const recording::Record& r : records) {
    if (auto* t = std::get_if<recording::StackTrace>(&r)) {
      EXPECT_FALSE(t->ips.empty());
      stacks_seen.push_back(static_cast<int32_t>(t->id));
    } else if (auto* o = std::get_if<recording::OffCpuSample>(&r)) {
      EXPECT_EQ(o->pid, static_cast<uint32_t>(::getpid()));
      if (o->tid != static_cast<uint32_t>(sleeper.load()) || o->duration_ns < 35'000'000) continue;
      ++long_sleeps;
      EXPECT_LT(o->duration_ns, 2'000'000'000u);
      EXPECT_EQ(o->state & 3u, 1u);  // TASK_INTERRUPTIBLE (plus flags such as TASK_FREEZABLE)
      // Each stack is written before the first record naming it.
      EXPECT_NE(std::find(stacks_seen.begin(), stacks_seen.end(), o->kernel_stack),
                stacks_seen.end());
      EXPECT_NE(std::find(stacks_seen.begin(), stacks_seen.end(), o->user_stack),
                stacks_seen.end());
    }
  }
  (*session)->DrainLosses(0, [](recording::Record&&) {});
  const BpfCounters& c = (*session)->counters();
  std::string durations;
  for (const recording::Record& r : records) {
    if (auto* o = std::get_if<recording::OffCpuSample>(&r)) {
      durations += (o->tid == uint32_t(sleeper) ? " S:" : " M:");
      uint64_t t0 = uint64_t(thread_start.tv_sec) * 1'000'000'000 + thread_start.tv_nsec;
      durations += " " + std::to_string(o->duration_ns / 1000) + "us/state" +
                   std::to_string(o->state) + " from +" +
                   std::to_string((int64_t(o->time_ns - o->duration_ns) - int64_t(t0)) / 1000) +
                   "us on cpu " + std::to_string(o->cpu);
    }
  }
  EXPECT_EQ(long_sleeps, 3) << "sleeper " << sleeper.load() << " stays:" << durations << "; losses " << c.losses[0]
                            << " " << c.losses[1] << " " << c.losses[2] << " " << c.losses[3]
                            << " " << c.losses[4] << "; program misses "
                            << (*session)->ProgramMisses();
  EXPECT_GT((*session)->counters().offcpu_events, 0u);
}

TEST(BpfSessionTest, CountsSamplesInTheKernel) {
  BpfOptions options;
  options.oncpu = true;
  auto session = BpfSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << BpfSession::LibbpfLog();

  perf_event_attr attr = {};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = 999;
  // As the Sampler's events: then bpf_get_stackid reuses perf's call chain.
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
  attr.disabled = 1;
  base::UniqueFd fd(static_cast<int>(::syscall(SYS_perf_event_open, &attr, Tid(), -1, -1, 0)));
  ASSERT_TRUE(fd.valid()) << "perf_event_open: " << errno;
  ASSERT_TRUE((*session)->AttachToPerfEvent(fd.get()).ok());
  ASSERT_EQ(::ioctl(fd.get(), PERF_EVENT_IOC_ENABLE, 0), 0);
  // 300 ms of this thread's CPU time, however busy the machine is.
  auto cpu_ms = [] {
    timespec ts;
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1'000'000;
  };
  const long start = cpu_ms();
  volatile uint64_t x = 0;
  while (cpu_ms() - start < 300) {
    for (int i = 0; i < 100000; ++i) x = x + i;
  }
  ::ioctl(fd.get(), PERF_EVENT_IOC_DISABLE, 0);

  std::vector<recording::Record> records;
  auto sink = [&](recording::Record&& r) { records.push_back(std::move(r)); };
  ASSERT_TRUE((*session)->DrainCounts(1, sink).ok());
  uint64_t counted = 0;
  uint64_t with_user_stack = 0;
  for (const recording::Record& r : records) {
    if (auto* t = std::get_if<recording::StackTrace>(&r)) {
      ASSERT_FALSE(t->ips.empty());
      for (uint64_t ip : t->ips) {
        EXPECT_LT(ip, static_cast<uint64_t>(-4095)) << "a context marker in a stack";
      }
      // User frames are user addresses (below the kernel's half).
      if (!t->kernel) {
        EXPECT_LT(t->ips.front(), 1ull << 47);
      }
    }
    if (auto* s = std::get_if<recording::StackSample>(&r)) {
      EXPECT_EQ(s->tid, static_cast<uint32_t>(Tid()));
      counted += s->count;
      if (s->user_stack != recording::kNoStack) with_user_stack += s->count;
      // cpu-clock periods are nanoseconds: about 1 ms at 999 Hz.
      EXPECT_NEAR(static_cast<double>(s->period) / static_cast<double>(s->count), 1e6, 2e5);
    }
  }
  // 300 ms of CPU at 999 Hz: about 300 samples.
  EXPECT_GT(counted, 150u);
  EXPECT_EQ(with_user_stack, counted);

  // A second read reports only growth: nothing new happened.
  records.clear();
  ASSERT_TRUE((*session)->DrainCounts(2, sink).ok());
  for (const recording::Record& r : records) {
    EXPECT_FALSE(std::holds_alternative<recording::StackSample>(r));
  }
}

}  // namespace
}  // namespace profcpu::collector
