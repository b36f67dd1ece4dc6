#include "fold/profile_filter.h"

#include "fold/profile_test_util.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using testing::ProfileMaker;

constexpr uint64_t kStart = 1'000'000'000'000;  // collection start, ns
constexpr uint64_t kSecond = 1'000'000'000;

// Samples of two processes, three threads and the idle loop, one a second.
Profile MakeFilterProfile() {
  ProfileMaker maker;
  const uint32_t work = maker.Location(0x1000, false, "/app", {{"work"}});
  const uint32_t main = maker.Location(0x2000, false, "/app", {{"main"}});
  const uint32_t idle = maker.Location(0xffff1000, true, "[kernel.kallsyms]",
                                       {{"mwait_idle_with_hints.constprop.0"}});
  const uint32_t start = maker.Location(0xffff2000, true, "[kernel.kallsyms]",
                                        {{"cpu_startup_entry"}});
  const uint32_t syscall = maker.Location(0xffff3000, true, "[kernel.kallsyms]",
                                          {{"do_syscall_64"}});
  maker.Sample("app", 10, 10, 0, kStart + 0 * kSecond, 1, "cpu-clock", {work, main});
  maker.Sample("app", 10, 11, 0, kStart + 1 * kSecond, 1, "cpu-clock", {work, main});
  maker.Sample("worker", 10, 12, 1, kStart + 2 * kSecond, 1, "cpu-clock", {syscall, main});
  maker.Sample("other", 20, 20, 1, kStart + 3 * kSecond, 1, "cpu-clock", {main});
  maker.Sample("swapper", 0, 0, 1, kStart + 4 * kSecond, 1, "cpu-clock", {idle, start});
  return std::move(maker.profile());
}

std::vector<uint32_t> Tids(const Profile& profile) {
  std::vector<uint32_t> tids;
  for (const Sample& sample : profile.samples()) tids.push_back(sample.tid);
  return tids;
}

TEST(ProfileFilterTest, EmptyFilterKeepsAll) {
  Profile profile = MakeFilterProfile();
  ProfileFilter filter;
  EXPECT_TRUE(filter.empty());
  const ProfileFilterStats stats = FilterProfile(filter, &profile);
  EXPECT_EQ(stats.kept, 5u);
  EXPECT_EQ(stats.dropped, 0u);
}

TEST(ProfileFilterTest, ByProcessThreadAndName) {
  Profile profile = MakeFilterProfile();
  ProfileFilter filter;
  filter.pids = {10};
  FilterProfile(filter, &profile);
  EXPECT_EQ(Tids(profile), (std::vector<uint32_t>{10, 11, 12}));

  profile = MakeFilterProfile();
  filter = ProfileFilter();
  filter.tids = {11, 20};
  FilterProfile(filter, &profile);
  EXPECT_EQ(Tids(profile), (std::vector<uint32_t>{11, 20}));

  profile = MakeFilterProfile();
  filter = ProfileFilter();
  filter.comms = {"worker", "other"};
  filter.pids = {10};  // all conditions must hold
  const ProfileFilterStats stats = FilterProfile(filter, &profile);
  EXPECT_EQ(Tids(profile), (std::vector<uint32_t>{12}));
  EXPECT_EQ(stats.dropped, 4u);
}

TEST(ProfileFilterTest, ByTimeRelativeToTheStart) {
  Profile profile = MakeFilterProfile();
  ProfileFilter filter;
  filter.start_ns = kStart;
  filter.from_s = 1;
  filter.to_s = 3;  // [1 s, 3 s): the samples at 1 s and 2 s
  FilterProfile(filter, &profile);
  EXPECT_EQ(Tids(profile), (std::vector<uint32_t>{11, 12}));

  profile = MakeFilterProfile();
  filter.from_s = 3.5;
  filter.to_s.reset();
  FilterProfile(filter, &profile);
  EXPECT_EQ(Tids(profile), (std::vector<uint32_t>{0}));

  profile = MakeFilterProfile();
  filter.from_s = 1e30;  // absurd values clamp instead of overflowing
  FilterProfile(filter, &profile);
  EXPECT_TRUE(profile.samples().empty());
}

TEST(ProfileFilterTest, NoIdleDropsTheIdleLoopOnly) {
  Profile profile = MakeFilterProfile();
  ProfileFilter filter;
  filter.no_idle = true;
  FilterProfile(filter, &profile);
  // The kernel frame under a real thread (do_syscall_64) stays.
  EXPECT_EQ(Tids(profile), (std::vector<uint32_t>{10, 11, 12, 20}));
  EXPECT_TRUE(IsIdleFunction("intel_idle"));
  EXPECT_TRUE(IsIdleFunction("mwait_idle_with_hints.constprop.0"));
  EXPECT_FALSE(IsIdleFunction("idle_worker_loop"));
  EXPECT_FALSE(IsIdleFunction(""));
}

}  // namespace
}  // namespace profcpu::fold
