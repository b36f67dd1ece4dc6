#include "collector/perf/permission_advice.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

TEST(PermissionAdviceTest, AnotherUsersProcessNeedsSysPtrace) {
  PermissionFacts f;
  f.paranoid = 2;
  f.kernel_frames = false;
  f.has_perfmon = true;
  f.target_is_ours = false;
  std::string advice = PermissionAdvice(f);
  EXPECT_NE(advice.find("CAP_SYS_PTRACE"), std::string::npos) << advice;
  EXPECT_EQ(advice.find("CAP_PERFMON"), std::string::npos) << advice;
}

TEST(PermissionAdviceTest, KernelStacksAtParanoidTwoNeedPerfmon) {
  PermissionFacts f;
  f.paranoid = 2;
  f.kernel_frames = true;
  std::string advice = PermissionAdvice(f);
  EXPECT_NE(advice.find("CAP_PERFMON"), std::string::npos) << advice;
  EXPECT_NE(advice.find("perf_event_paranoid is 2"), std::string::npos) << advice;
  EXPECT_EQ(advice.find("CAP_SYS_PTRACE"), std::string::npos) << advice;
}

TEST(PermissionAdviceTest, UserOnlySamplingOfOwnProcessAtTwoIsAllowed) {
  PermissionFacts f;
  f.paranoid = 2;
  f.kernel_frames = false;
  // Nothing is missing: the refusal must come from elsewhere (seccomp).
  EXPECT_NE(PermissionAdvice(f).find("seccomp"), std::string::npos);
}

TEST(PermissionAdviceTest, BothMissingAreBothNamed) {
  PermissionFacts f;
  f.paranoid = 3;
  f.kernel_frames = false;
  f.target_is_ours = false;
  std::string advice = PermissionAdvice(f);
  EXPECT_NE(advice.find("CAP_SYS_PTRACE"), std::string::npos);
  EXPECT_NE(advice.find("CAP_PERFMON"), std::string::npos);
}

TEST(PermissionAdviceTest, SystemWideNeedsPerfmonFromParanoidOne) {
  PermissionFacts f;
  f.paranoid = 1;
  f.kernel_frames = false;
  f.all_tasks = true;
  std::string advice = PermissionAdvice(f);
  EXPECT_NE(advice.find("per-CPU"), std::string::npos) << advice;
  EXPECT_NE(advice.find("CAP_PERFMON"), std::string::npos) << advice;
}

TEST(PermissionAdviceTest, GathersFactsAboutThisProcess) {
  PermissionFacts f = GatherPermissionFacts(::getpid(), true);
  EXPECT_TRUE(f.target_is_ours);
  EXPECT_GE(f.paranoid, -1);
}

}  // namespace
}  // namespace profcpu::collector
