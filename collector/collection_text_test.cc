#include "collector/collection_text.h"

#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

TEST(CollectionTextTest, NamesTheTarget) {
  CollectionOptions options;
  EXPECT_EQ(DescribeTarget(options), "all processes");
  options.cgroup_dir = "/sys/fs/cgroup/app";
  EXPECT_EQ(DescribeTarget(options), "cgroup /sys/fs/cgroup/app");
  options.container_id = "3f4e5a6b7c8d9e0f1a2b";
  EXPECT_EQ(DescribeTarget(options), "container 3f4e5a6b7c8d");
  options.pid = 99999999;  // above PID_MAX_LIMIT: no thread to resolve
  EXPECT_EQ(DescribeTarget(options), "pid 99999999");
  options.command = {"./app", "--fast"};
  EXPECT_EQ(DescribeTarget(options), "./app --fast");
}

TEST(CollectionTextTest, AThreadIdNamesItsProcess) {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::thread thread([&] {
    tid = ::gettid();
    while (!done) ::usleep(1000);
  });
  while (tid == 0) ::usleep(1000);
  CollectionOptions options;
  options.pid = tid;
  EXPECT_EQ(DescribeTarget(options),
            absl::StrCat("pid ", ::getpid(), " (the process of thread ", tid.load(), ")"));
  options.pid = ::getpid();
  EXPECT_EQ(DescribeTarget(options), absl::StrCat("pid ", ::getpid()));
  done = true;
  thread.join();
}

TEST(CollectionTextTest, SaysWhatIsSampled) {
  CollectionOptions options;
  options.sampler.rate = 99;
  options.sampler.event.name = "cpu-clock";
  EXPECT_EQ(DescribeSampling(options), "99 Hz (cpu-clock)");
  options.profile.backend = SamplingBackend::kBpf;
  options.profile.mode = ProfileMode::kWall;
  EXPECT_EQ(DescribeSampling(options), "99 Hz (cpu-clock, BPF) and off-CPU time");
  options.profile.mode = ProfileMode::kOffCpu;
  EXPECT_EQ(DescribeSampling(options), "off-CPU time (BPF)");
}

}  // namespace
}  // namespace profcpu::collector
