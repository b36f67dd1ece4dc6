// Real perf events on this test's own threads: no mocks.
#include "collector/sampler.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "collector/perf/event_spec.h"
#include "collector/proc/cgroup.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

std::atomic<bool> g_stop{false};

__attribute__((noinline)) void Spin() {
  volatile uint64_t x = 0;
  while (!g_stop.load(std::memory_order_relaxed)) x = x + 1;
}

TEST(SamplerTest, SamplesABusyThreadWithUserCallChains) {
  g_stop = false;
  std::atomic<pid_t> spinner_tid{0};
  std::thread spinner([&] {
    spinner_tid = static_cast<pid_t>(::syscall(SYS_gettid));
    Spin();
  });
  while (spinner_tid == 0) ::usleep(1000);

  std::vector<recording::Sample> samples;
  SamplerOptions options;
  options.event = *ParseEventName("cpu-clock");
  options.rate = 999;
  auto sampler = Sampler::Create(options, [&](recording::Record&& r) {
    if (auto* s = std::get_if<recording::Sample>(&r)) samples.push_back(*s);
  });
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  absl::Status attached = (*sampler)->AttachProcess(::getpid());
  ASSERT_TRUE(attached.ok()) << attached;
  for (int i = 0; i < 5; ++i) {
    (*sampler)->Wait(100);
    (*sampler)->Drain();
  }
  (*sampler)->DisableAll();
  (*sampler)->Drain();
  g_stop = true;
  spinner.join();

  size_t spinner_samples = 0;
  for (const auto& s : samples) {
    EXPECT_EQ(s.pid, static_cast<uint32_t>(::getpid()));
    if (s.tid == static_cast<uint32_t>(spinner_tid.load())) {
      ++spinner_samples;
      EXPECT_FALSE(s.user_ips.empty());
    }
  }
  // 0.5 s at 999 Hz of a thread that never sleeps: ~500 samples; on a loaded
  // two-core machine it may get far less CPU, but not none.
  EXPECT_GT(spinner_samples, 20u);
  EXPECT_EQ((*sampler)->counters().samples, samples.size());
}

TEST(SamplerTest, FollowsThreadsCreatedAfterAttaching) {
  g_stop = false;
  std::vector<recording::Record> records;
  SamplerOptions options;
  options.event = *ParseEventName("cpu-clock");
  options.rate = 999;
  auto sampler = Sampler::Create(options, [&](recording::Record&& r) { records.push_back(r); });
  ASSERT_TRUE(sampler.ok());
  ASSERT_TRUE((*sampler)->AttachProcess(::getpid()).ok());
  std::atomic<pid_t> late_tid{0};
  std::thread late([&] {
    late_tid = static_cast<pid_t>(::syscall(SYS_gettid));
    Spin();
  });
  for (int i = 0; i < 4; ++i) {
    (*sampler)->Wait(100);
    (*sampler)->Drain();
  }
  g_stop = true;
  late.join();
  (*sampler)->DisableAll();
  (*sampler)->Drain();
  bool saw_fork = false;
  size_t late_samples = 0;
  for (const auto& r : records) {
    if (auto* f = std::get_if<recording::Fork>(&r); f && f->tid == uint32_t(late_tid.load())) {
      saw_fork = true;
    }
    if (auto* s = std::get_if<recording::Sample>(&r); s && s->tid == uint32_t(late_tid.load())) {
      ++late_samples;
    }
  }
  EXPECT_TRUE(saw_fork);
  EXPECT_GT(late_samples, 10u);
}

TEST(SamplerTest, SystemWideSamplesSeeThisProcess) {
  g_stop = false;
  std::thread spinner(Spin);
  std::vector<recording::Sample> samples;
  SamplerOptions options;
  options.event = *ParseEventName("cpu-clock");
  options.rate = 499;
  auto sampler = Sampler::Create(options, [&](recording::Record&& r) {
    if (auto* s = std::get_if<recording::Sample>(&r)) samples.push_back(*s);
  });
  ASSERT_TRUE(sampler.ok());
  ASSERT_TRUE((*sampler)->AttachCpus(-1).ok());
  for (int i = 0; i < 4; ++i) {
    (*sampler)->Wait(100);
    (*sampler)->Drain();
  }
  (*sampler)->DisableAll();
  (*sampler)->Drain();
  g_stop = true;
  spinner.join();
  size_t ours = 0;
  for (const auto& s : samples) ours += s.pid == static_cast<uint32_t>(::getpid()) ? 1 : 0;
  EXPECT_GT(ours, 20u);
}

// A child in a cgroup of its own: a cgroup event samples it and nothing else.
TEST(SamplerTest, CgroupEventsSampleOnlyTheCgroup) {
  auto mount = CgroupV2Mount();
  ASSERT_TRUE(mount.ok()) << mount.status();
  std::string dir = absl::StrCat(*mount, "/profcpu-sampler-test-", ::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << "tests run as root and need cgroup v2: " << dir;
  pid_t child = ::fork();
  if (child == 0) {
    volatile uint64_t x = 0;
    while (true) x = x + 1;
  }
  ASSERT_TRUE(base::WriteFile(dir + "/cgroup.procs", absl::StrCat(child)).ok());
  g_stop = false;
  std::thread spinner(Spin);  // busy too, but outside the cgroup
  std::vector<recording::Sample> samples;
  SamplerOptions options;
  options.event = *ParseEventName("cpu-clock");
  options.rate = 499;
  auto sampler = Sampler::Create(options, [&](recording::Record&& r) {
    if (auto* s = std::get_if<recording::Sample>(&r)) samples.push_back(*s);
  });
  ASSERT_TRUE(sampler.ok());
  base::UniqueFd cgroup(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(cgroup.valid());
  absl::Status attached = (*sampler)->AttachCpus(cgroup.get());
  // Until enough samples arrived, or 10 s: the child competes for the CPUs
  // with the spinner and whatever else the machine runs.
  for (int i = 0; i < 100 && attached.ok() && samples.size() <= 40; ++i) {
    (*sampler)->Wait(100);
    (*sampler)->Drain();
  }
  (*sampler)->DisableAll();
  g_stop = true;
  spinner.join();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::rmdir(dir.c_str());
  ASSERT_TRUE(attached.ok()) << attached;
  ASSERT_GT(samples.size(), 20u);
  for (const auto& s : samples) EXPECT_EQ(s.pid, static_cast<uint32_t>(child));
}

TEST(SamplerTest, DeadProcessIsNotFound) {
  SamplerOptions options;
  options.event = *ParseEventName("cpu-clock");
  auto sampler = Sampler::Create(options, [](recording::Record&&) {});
  ASSERT_TRUE(sampler.ok());
  EXPECT_TRUE(absl::IsNotFound((*sampler)->AttachProcess(999999999)));
}

}  // namespace
}  // namespace profcpu::collector
