// Decoding and counting of inline events on made-up bytes; then the real
// BPF programs loaded into the running kernel (needs root, or CAP_BPF and
// CAP_PERFMON, and BTF), checked against what they record about this very
// process.
#include "collector/bpf/bpf_session.h"

#include <bpf/bpf.h>
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "base/unique_fd.h"
#include "collector/bpf/inline_events.h"
#include "collector/bpf/sample_counts.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

pid_t Tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

void SleepMs(int ms) {
  timespec ts = {0, ms * 1'000'000L};
  ::nanosleep(&ts, nullptr);
}

// An event as the programs lay it out: `header`, then the words.
template <typename Header>
std::string EventBytes(const Header& header, const std::vector<uint64_t>& words,
                       const std::string& tail = "") {
  std::string bytes(reinterpret_cast<const char*>(&header), sizeof(header));
  bytes.append(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(uint64_t));
  return bytes + tail;
}

TEST(InlineEventsTest, DecodesASampleAndItsStacks) {
  profcpu_sample_inline header = {};
  header.kind = PROFCPU_EVENT_SAMPLE_INLINE;
  header.pid = 10;
  header.tid = 11;
  header.cpu = 1;
  header.time_ns = 123;
  header.period = 1'001'001;
  header.kernel_bytes = 16;
  header.user_bytes = 24;
  const std::string bytes =
      EventBytes(header, {0xffffffff81000010, 0xffffffff81000020, 0x401000, 0x401100, 0x401200});
  SampleEvent event;
  ASSERT_TRUE(DecodeSample(bytes.data(), bytes.size(), &event));
  EXPECT_EQ(event.pid, 10u);
  EXPECT_EQ(event.tid, 11u);
  EXPECT_EQ(event.cpu, 1u);
  EXPECT_EQ(event.time_ns, 123u);
  EXPECT_EQ(event.period, 1'001'001u);
  EXPECT_EQ(event.stacks.kernel, (std::vector<uint64_t>{0xffffffff81000010, 0xffffffff81000020}));
  EXPECT_EQ(event.stacks.user, (std::vector<uint64_t>{0x401000, 0x401100, 0x401200}));

  // Shorter than its sizes say, sizes that are not whole frames or deeper
  // than the programs send, another kind: refused.
  EXPECT_FALSE(DecodeSample(bytes.data(), bytes.size() - 1, &event));
  header.user_bytes = 20;
  std::string odd = EventBytes(header, {1, 2, 3, 4, 5});
  EXPECT_FALSE(DecodeSample(odd.data(), odd.size(), &event));
  header.user_bytes = (PROFCPU_MAX_STACK_DEPTH + 1) * 8;
  std::string deep = EventBytes(header, std::vector<uint64_t>(200, 1));
  EXPECT_FALSE(DecodeSample(deep.data(), deep.size(), &event));
  header.user_bytes = 24;
  header.kind = PROFCPU_EVENT_SWITCH_OUT;
  std::string other = EventBytes(header, {1, 2, 3, 4, 5});
  EXPECT_FALSE(DecodeSample(other.data(), other.size(), &event));
}

TEST(InlineEventsTest, DecodesASwitchOutWithRegistersAndStackCopy) {
  profcpu_switch_out header = {};
  header.kind = PROFCPU_EVENT_SWITCH_OUT;
  header.tid = 7;
  header.time_ns = 99;
  header.kernel_bytes = 8;
  header.user_bytes = 8;
  header.regs_bytes = PROFCPU_LEAF_REGS * 8;
  header.copy_bytes = 5;
  const std::string bytes =
      EventBytes(header, {0xffffffff81000010, 0x401000, 0x7ffd0010, 0x7ffd0000, 0x7f0012}, "abcde");
  SwitchOutEvent event;
  ASSERT_TRUE(DecodeSwitchOut(bytes.data(), bytes.size(), &event));
  EXPECT_EQ(event.tid, 7u);
  EXPECT_EQ(event.time_ns, 99u);
  EXPECT_EQ(event.stacks.kernel, (std::vector<uint64_t>{0xffffffff81000010}));
  EXPECT_EQ(event.stacks.user, (std::vector<uint64_t>{0x401000}));
  EXPECT_EQ(event.user_regs, (std::vector<uint64_t>{0x7ffd0010, 0x7ffd0000, 0x7f0012}));
  EXPECT_EQ(event.user_stack_copy, "abcde");
  EXPECT_FALSE(DecodeSwitchOut(bytes.data(), bytes.size() - 1, &event));

  // Without registers (no -callgraph fp+cfi, a kernel thread): stacks only,
  // and the buffers of the last event are not left behind.
  header.regs_bytes = 0;
  header.copy_bytes = 0;
  const std::string plain = EventBytes(header, {0xffffffff81000010, 0x401000});
  ASSERT_TRUE(DecodeSwitchOut(plain.data(), plain.size(), &event));
  EXPECT_TRUE(event.user_regs.empty());
  EXPECT_TRUE(event.user_stack_copy.empty());

  // A copy without registers, a partial register set, a copy above the cap.
  header.copy_bytes = 8;
  std::string copy_alone = EventBytes(header, {1, 2, 3});
  EXPECT_FALSE(DecodeSwitchOut(copy_alone.data(), copy_alone.size(), &event));
  header.regs_bytes = 16;
  header.copy_bytes = 0;
  std::string two_regs = EventBytes(header, {1, 2, 3, 4});
  EXPECT_FALSE(DecodeSwitchOut(two_regs.data(), two_regs.size(), &event));
  header.regs_bytes = 24;
  header.copy_bytes = PROFCPU_LEAF_COPY_MAX + 8;
  std::string big = EventBytes(header, std::vector<uint64_t>(2 + 3 + 65, 1));
  EXPECT_FALSE(DecodeSwitchOut(big.data(), big.size(), &event));
}

TEST(SampleCountsTest, SumsPerThreadCpuAndStacksUntilFlushed) {
  SampleCounts counts;
  counts.Add(1, 2, 0, 5, 6, 1000);
  counts.Add(1, 2, 0, 5, 6, 1100);
  counts.Add(1, 2, 1, 5, 6, 900);   // another CPU
  counts.Add(1, 3, 0, recording::kNoStack, 6, 1000);  // another thread, no kernel stack
  std::vector<recording::StackSample> samples;
  auto sink = [&](recording::Record&& r) {
    samples.push_back(std::get<recording::StackSample>(r));
  };
  EXPECT_EQ(counts.Flush(42, sink), 4u);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].time_ns, 42u);
  EXPECT_EQ(samples[0].tid, 2u);
  EXPECT_EQ(samples[0].cpu, 0u);
  EXPECT_EQ(samples[0].count, 2u);
  EXPECT_EQ(samples[0].period, 2100u);
  EXPECT_EQ(samples[0].kernel_stack, 5);
  EXPECT_EQ(samples[0].user_stack, 6);
  EXPECT_EQ(samples[1].cpu, 1u);
  EXPECT_EQ(samples[1].count, 1u);
  EXPECT_EQ(samples[2].tid, 3u);
  EXPECT_EQ(samples[2].kernel_stack, recording::kNoStack);
  // Each flush reports what came since the last one.
  EXPECT_TRUE(counts.empty());
  samples.clear();
  EXPECT_EQ(counts.Flush(43, sink), 0u);
  EXPECT_TRUE(samples.empty());
}

TEST(BpfSessionTest, AStayStillOnRecordEndsWhenItsThreadBeganRunning) {
  profcpu_blocked b = {};
  b.start_ns = 1'000;
  b.runtime_ns = 50;
  // Blocked still: its CPU time has not moved. Now.
  EXPECT_EQ(BpfSession::StayEnd(b, 50, 5'000), 5'000u);
  // Gone (no /proc entry) and never woken: now.
  EXPECT_EQ(BpfSession::StayEnd(b, std::nullopt, 5'000), 5'000u);
  // Woken, waiting for a CPU: at the wakeup.
  b.woken_ns = 3'000;
  EXPECT_EQ(BpfSession::StayEnd(b, 50, 5'000), 3'000u);
  // Ran 1.5 us since, though no switch to it was reported: from 3.5 us on.
  EXPECT_EQ(BpfSession::StayEnd(b, 1'550, 5'000), 3'500u);
  b.woken_ns = 0;
  EXPECT_EQ(BpfSession::StayEnd(b, 1'550, 5'000), 3'500u);
  // A snapshot that raced with the wakeup: it ran longer than the "stay"
  // lasted, so there was none.
  EXPECT_EQ(BpfSession::StayEnd(b, 9'050, 5'000), 1'000u);
}

uint64_t MonotonicNs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

// This thread's CPU time as the scheduler keeps it (se.sum_exec_runtime).
uint64_t SchedRuntimeNs() {
  FILE* f = std::fopen(("/proc/self/task/" + std::to_string(Tid()) + "/schedstat").c_str(), "r");
  unsigned long long runtime = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%llu", &runtime) != 1) runtime = 0;
    std::fclose(f);
  }
  return runtime;
}

// Linux 6.18 sometimes runs a woken thread without reporting the switch to
// it, and now and then without reporting its wakeup either (ftrace misses
// them too). Staged here: a stay on record 100 ms old while the thread
// runs. It used to be dropped (counted as unended) when the thread next
// switched out; it ends where the thread's CPU time since says it began
// running.
TEST(BpfSessionTest, AStayWhoseSwitchBackWentUnreportedIsKept) {
  BpfOptions options;
  options.offcpu = true;
  auto session = BpfSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << BpfSession::LibbpfLog();
  ASSERT_TRUE((*session)->AttachScheduler().ok());
  ASSERT_TRUE((*session)->TrackProcess(::getpid()).ok());
  const int blocked_fd = (*session)->BlockedMapFdForTesting();
  std::atomic<pid_t> staged{0};
  std::thread thread([&] {
    const uint32_t tid = static_cast<uint32_t>(Tid());
    profcpu_blocked b = {};
    b.start_ns = MonotonicNs() - 100'000'000;
    b.runtime_ns = SchedRuntimeNs();
    b.state = 1;
    b.pid = static_cast<uint32_t>(::getpid());
    b.tid = tid;
    ASSERT_EQ(bpf_map_update_elem(blocked_fd, &tid, &b, BPF_ANY), 0);
    staged = static_cast<pid_t>(tid);
    // Runs 20 ms of CPU, then blocks: the first switch-out finds the stay.
    timespec start, now;
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    volatile uint64_t x = 0;
    do {
      for (int i = 0; i < 10000; ++i) x = x + i;
      ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((now.tv_sec - start.tv_sec) * 1'000'000'000L + now.tv_nsec - start.tv_nsec <
             20'000'000L);
    SleepMs(10);
  });
  thread.join();

  std::vector<uint64_t> durations;
  (*session)->DrainEvents([&](recording::Record&& r) {
    if (auto* o = std::get_if<recording::OffCpuSample>(&r)) {
      if (o->tid == static_cast<uint32_t>(staged.load())) durations.push_back(o->duration_ns);
    }
  });
  (*session)->DrainLosses(0, [](recording::Record&&) {});
  EXPECT_EQ((*session)->counters().losses[PROFCPU_LOSS_MISSED_SWITCH], 0u);
  // The scheduler's CPU time read when staging may lag by a tick (4 ms at
  // HZ=250), which makes the stay end that much earlier; on a loaded machine
  // the thread waits to run between its CPU time, which makes it end later
  // (seen: 104 ms at load 4 on two cores). The thread's own stays are 10 ms.
  EXPECT_EQ(std::count_if(durations.begin(), durations.end(),
                          [](uint64_t d) { return d >= 90'000'000 && d <= 150'000'000; }),
            1)
      << ::testing::PrintToString(durations);
}

TEST(BpfSessionTest, RingBufferHoldsFourDrainsOfSamples) {
  // 999 Hz on 2 CPUs, 127 frames each: 0.8 MB, under the 4 MiB floor.
  EXPECT_EQ(BpfSession::RingBufferBytes(999, 2, 127), 4u << 20);
  // 4999 Hz on 64 CPUs: 4999 * 64 * 2072 B * 0.4 = 265 MB, capped.
  EXPECT_EQ(BpfSession::RingBufferBytes(4999, 64, 127), 256u << 20);
  // 999 Hz on 32 CPUs: 26.5 MB, rounded up to a power of two.
  EXPECT_EQ(BpfSession::RingBufferBytes(999, 32, 127), 32u << 20);
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

// A cpu-clock event at 999 Hz on this thread, as the Sampler opens them
// (then bpf_get_stack reuses perf's call chain), with `session`'s program.
base::UniqueFd SampleThisThread(BpfSession& session) {
  perf_event_attr attr = {};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = 999;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
  attr.disabled = 1;
  base::UniqueFd fd(static_cast<int>(::syscall(SYS_perf_event_open, &attr, Tid(), -1, -1, 0)));
  EXPECT_TRUE(fd.valid()) << "perf_event_open: " << errno;
  if (!fd.valid()) return fd;
  EXPECT_TRUE(session.AttachToPerfEvent(fd.get()).ok());
  return fd;
}

// 300 ms of this thread's CPU time, however busy the machine is, sampled.
void BurnSampled(int fd) {
  auto cpu_ms = [] {
    timespec ts;
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1'000'000;
  };
  ASSERT_EQ(::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  const long start = cpu_ms();
  volatile uint64_t x = 0;
  while (cpu_ms() - start < 300) {
    for (int i = 0; i < 100000; ++i) x = x + i;
  }
  ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

TEST(BpfSessionTest, SendsEachSampleWithItsStacksAndCountsThemPerDrain) {
  BpfOptions options;
  options.oncpu = true;
  auto session = BpfSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << BpfSession::LibbpfLog();
  base::UniqueFd fd = SampleThisThread(**session);
  ASSERT_TRUE(fd.valid());
  BurnSampled(fd.get());

  std::vector<recording::Record> records;
  auto sink = [&](recording::Record&& r) { records.push_back(std::move(r)); };
  (*session)->DrainEvents(sink);
  (*session)->DrainCounts(1, sink);
  std::vector<int32_t> stacks_seen;
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
      stacks_seen.push_back(static_cast<int32_t>(t->id));
    }
    if (auto* s = std::get_if<recording::StackSample>(&r)) {
      EXPECT_EQ(s->tid, static_cast<uint32_t>(Tid()));
      EXPECT_EQ(s->time_ns, 1u);  // counted: stamped with the drain
      counted += s->count;
      // Each stack is written before the first record naming it.
      if (s->user_stack != recording::kNoStack) {
        with_user_stack += s->count;
        EXPECT_NE(std::find(stacks_seen.begin(), stacks_seen.end(), s->user_stack),
                  stacks_seen.end());
      }
      // cpu-clock periods are nanoseconds: about 1 ms at 999 Hz.
      EXPECT_NEAR(static_cast<double>(s->period) / static_cast<double>(s->count), 1e6, 2e5);
    }
  }
  // 300 ms of CPU at 999 Hz: about 300 samples, every one with its stack.
  EXPECT_GT(counted, 150u);
  EXPECT_EQ(with_user_stack, counted);
  EXPECT_EQ((*session)->counters().samples, counted);
  records.clear();
  (*session)->DrainLosses(2, sink);
  EXPECT_TRUE(records.empty()) << "nothing lost";

  // A second drain reports only what came since: nothing.
  (*session)->DrainEvents(sink);
  (*session)->DrainCounts(3, sink);
  EXPECT_TRUE(records.empty());
}

TEST(BpfSessionTest, TimestampsWriteEachSampleAsItCame) {
  BpfOptions options;
  options.oncpu = true;
  options.timestamps = true;
  auto session = BpfSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << BpfSession::LibbpfLog();
  base::UniqueFd fd = SampleThisThread(**session);
  ASSERT_TRUE(fd.valid());
  BurnSampled(fd.get());

  std::vector<recording::StackSample> samples;
  auto sink = [&](recording::Record&& r) {
    if (auto* s = std::get_if<recording::StackSample>(&r)) samples.push_back(*s);
  };
  (*session)->DrainEvents(sink);
  (*session)->DrainCounts(1, sink);  // nothing counted: each was written already
  ASSERT_GT(samples.size(), 150u);
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].count, 1u);
    EXPECT_NE(samples[i].time_ns, 1u);
    if (i > 0) {
      EXPECT_GE(samples[i].time_ns, samples[i - 1].time_ns);
    }
  }
}

TEST(BpfSessionTest, AFullRingBufferIsCountedAndReportedAsLost) {
  BpfOptions options;
  options.oncpu = true;
  options.ring_buffer_bytes = 4096;  // a page: a few dozen samples
  auto session = BpfSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << BpfSession::LibbpfLog();
  base::UniqueFd fd = SampleThisThread(**session);
  ASSERT_TRUE(fd.valid());
  BurnSampled(fd.get());  // about 300 samples, none drained meanwhile

  uint64_t counted = 0;
  uint64_t lost = 0;
  auto sink = [&](recording::Record&& r) {
    if (auto* s = std::get_if<recording::StackSample>(&r)) counted += s->count;
    if (auto* l = std::get_if<recording::Lost>(&r)) {
      EXPECT_EQ(l->reason, recording::LossReason::kBpfRingBufferFull);
      lost += l->count;
    }
  };
  (*session)->DrainEvents(sink);
  (*session)->DrainCounts(1, sink);
  (*session)->DrainLosses(1, sink);
  EXPECT_GT(counted, 0u);
  EXPECT_GT(lost, 100u);
  EXPECT_EQ((*session)->counters().losses[PROFCPU_LOSS_RINGBUF], lost);
  // Every sample taken is either recorded or counted lost.
  EXPECT_GT(counted + lost, 150u);
}

// glibc's own poll, not a sanitizer's interceptor of it (which has a frame
// and would stand between the wrapper and its caller).
using PollFunction = int (*)(pollfd*, nfds_t, int);
PollFunction LibcPoll() {
  void* libc = ::dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  void* poll = libc != nullptr ? ::dlsym(libc, "poll") : nullptr;
  return poll != nullptr ? reinterpret_cast<PollFunction>(poll) : &::poll;
}

// Blocks in poll(2) for `ms` on a pipe nobody writes to: glibc's poll
// wrapper has no frame of its own, so only the stack copy holds the
// return address into this function.
__attribute__((noinline)) void BlockInPoll(int ms) {
  static const PollFunction libc_poll = LibcPoll();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pollfd p = {fds[0], POLLIN, 0};
  libc_poll(&p, 1, ms);
  ::close(fds[0]);
  ::close(fds[1]);
  asm volatile("" ::: "memory");  // no tail call: the return address stays on the stack
}

// `stay` (BlockInPoll's) carries registers whose ip lies in libc and a stack
// copy holding, among its first words above sp (the copy ends at
// BlockInPoll's frame record, bp + 16), the return address from poll's
// wrapper into BlockInPoll.
void ExpectLeafOfBlockInPoll(const recording::OffCpuSample& stay) {
  EXPECT_EQ(stay.user_regs_abi, 2u);
  ASSERT_EQ(stay.user_regs.size(), 3u);  // bp, sp, ip
  EXPECT_NE(stay.user_regs[1], 0u);
  Dl_info info;
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(stay.user_regs[2]), &info), 0);
  EXPECT_NE(std::string(info.dli_fname).find("libc"), std::string::npos) << info.dli_fname;
  ASSERT_GE(stay.user_stack_copy.size(), 16u);
  ASSERT_LE(stay.user_stack_copy.size(), size_t{PROFCPU_LEAF_COPY_MAX});
  const auto begin = reinterpret_cast<uint64_t>(&BlockInPoll);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr uint64_t kCodeBytes = 2048;  // instrumented: a much longer function
#else
  constexpr uint64_t kCodeBytes = 256;
#endif
  // Below the copy's last 16 bytes: those are BlockInPoll's own frame record
  // (saved bp, return address into its caller), where the copy ends.
  bool found = false;
  for (size_t at = 0; at + 8 <= stay.user_stack_copy.size() - 16; at += 8) {
    uint64_t word;
    std::memcpy(&word, stay.user_stack_copy.data() + at, sizeof(word));
    if (word > begin && word < begin + kCodeBytes) found = true;
  }
  EXPECT_TRUE(found) << "no return address into BlockInPoll in the copy";
}

TEST(BpfSessionTest, LeafCopyCarriesRegistersAndTheStackAboveSp) {
  BpfOptions options;
  options.offcpu = true;
  options.leaf_copy = true;
  auto session = BpfSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << BpfSession::LibbpfLog();
  ASSERT_TRUE((*session)->AttachScheduler().ok());
  ASSERT_TRUE((*session)->TrackProcess(::getpid()).ok());
  std::atomic<pid_t> poller{0};
  std::thread thread([&] {
    poller = Tid();
    BlockInPoll(150);
  });
  thread.join();

  std::vector<recording::OffCpuSample> stays;
  (*session)->DrainEvents([&](recording::Record&& r) {
    if (auto* o = std::get_if<recording::OffCpuSample>(&r)) stays.push_back(*o);
  });
  const recording::OffCpuSample* poll_stay = nullptr;
  for (const recording::OffCpuSample& o : stays) {
    if (o.tid == static_cast<uint32_t>(poller.load()) && o.duration_ns > 100'000'000) poll_stay = &o;
  }
  ASSERT_NE(poll_stay, nullptr);
  ExpectLeafOfBlockInPoll(*poll_stay);
  EXPECT_GT((*session)->counters().leaf_copies, 0u);
}

// A thread blocked in poll before collection begins: the snapshot of
// blocked threads copies its registers and stack too (bpf_copy_from_user_task).
TEST(BpfSessionTest, SnapshotOfABlockedThreadCarriesItsLeafCopy) {
  std::atomic<pid_t> poller{0};
  std::thread thread([&] {
    poller = Tid();
    BlockInPoll(600);
  });
  while (poller.load() == 0) SleepMs(1);
  SleepMs(50);  // in poll by now
  BpfOptions options;
  options.offcpu = true;
  options.leaf_copy = true;
  auto session = BpfSession::Open(options);
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << BpfSession::LibbpfLog();
  ASSERT_TRUE((*session)->AttachScheduler().ok());
  ASSERT_TRUE((*session)->TrackProcess(::getpid()).ok());
  std::vector<recording::OffCpuSample> stays;
  auto sink = [&](recording::Record&& r) {
    if (auto* o = std::get_if<recording::OffCpuSample>(&r)) stays.push_back(*o);
  };
  auto found = (*session)->SnapshotBlockedThreads(sink);
  ASSERT_TRUE(found.ok()) << found.status();
  if (*found == 0) GTEST_SKIP() << "no sleepable task iterator (Linux before 5.18)";
  (*session)->DrainEvents(sink);
  (*session)->ReportStaysInProgress(MonotonicNs(), sink);
  thread.join();
  const recording::OffCpuSample* poll_stay = nullptr;
  for (const recording::OffCpuSample& o : stays) {
    if (o.tid == static_cast<uint32_t>(poller.load())) poll_stay = &o;
  }
  ASSERT_NE(poll_stay, nullptr);
  ExpectLeafOfBlockInPoll(*poll_stay);
}

}  // namespace
}  // namespace profcpu::collector
