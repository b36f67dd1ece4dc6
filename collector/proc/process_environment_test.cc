#include "collector/proc/process_environment.h"

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

TEST(ProcessEnvironmentTest, ParsesAndPicksTheDotnetDirectories) {
  const char raw[] =
      "PATH=/bin\0DOTNET_PerfMapJitDumpPath=/var/jit/\0TMPDIR=/scratch\0"
      "junk\0=nothing\0COMPlus_PerfMapEnabled=3\0PATH=/second\0";
  std::string text(raw, sizeof(raw) - 1);
  ProcessEnvironment env = ProcessEnvironment::Parse(text);
  EXPECT_EQ(env.Get("PATH"), "/bin");
  EXPECT_EQ(env.DotnetPerfMapDirectory(), "/var/jit");
  EXPECT_EQ(env.TempDirectory(), "/scratch");
  EXPECT_EQ(env.DotnetPerfMapEnabled(), "3");
  EXPECT_FALSE(env.Get("junk").has_value());
}

TEST(ProcessEnvironmentTest, DefaultsToTmp) {
  const char raw[] = "A=1\0TMPDIR=\0";
  ProcessEnvironment env = ProcessEnvironment::Parse(std::string(raw, sizeof(raw) - 1));
  EXPECT_EQ(env.DotnetPerfMapDirectory(), "/tmp");
  EXPECT_EQ(env.TempDirectory(), "/tmp");
  EXPECT_FALSE(env.DotnetPerfMapEnabled().has_value());
}

TEST(ProcessEnvironmentTest, ReadsThisProcess) {
  ::setenv("PROFCPU_ENV_TEST", "yes", 1);
  // /proc/self/environ shows the environment at exec; ours was set later, so
  // check something every test process has instead.
  auto env = ProcessEnvironment::Read(::getpid());
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_TRUE(env->Get("PATH").has_value() || env->Get("HOME").has_value());
}

}  // namespace
}  // namespace profcpu::collector
