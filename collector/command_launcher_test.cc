#include "collector/command_launcher.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

// Descriptors open in this process now (the one listing them excluded).
int OpenFdCount() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count - 1;
}

TEST(CommandLauncherTest, FindsProgramsAsExecvpWould) {
  auto sh = FindProgram("sh");
  ASSERT_TRUE(sh.ok()) << sh.status();
  EXPECT_EQ(sh->substr(sh->size() - 3), "/sh");

  auto missing = FindProgram("/no/such/cmd");
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_EQ(missing.status().message(), "command '/no/such/cmd' not found (no such file)");
  auto not_on_path = FindProgram("profcpu-no-such-program");
  EXPECT_EQ(not_on_path.status().message(), "command 'profcpu-no-such-program' not found in PATH");

  const std::string plain = absl::StrCat(::testing::TempDir(), "/not_executable_", ::getpid());
  ASSERT_TRUE(base::WriteFile(plain, "#!/bin/sh\n").ok());
  ::chmod(plain.c_str(), 0644);
  // Without an x bit even root may not execute it (access(2), X_OK).
  EXPECT_TRUE(absl::IsPermissionDenied(FindProgram(plain).status()));
  ::chmod(plain.c_str(), 0755);
  EXPECT_TRUE(FindProgram(plain).ok());
  EXPECT_TRUE(absl::IsNotFound(FindProgram(::testing::TempDir()).status()));  // a directory
}

TEST(CommandLauncherTest, ExecFailureNamesTheProgram) {
  auto launcher = CommandLauncher::Prepare({"/no/such/cmd"});
  ASSERT_TRUE(launcher.ok());
  absl::Status started = (*launcher)->Start();
  EXPECT_TRUE(absl::IsNotFound(started));
  EXPECT_NE(started.message().find("'/no/such/cmd'"), absl::string_view::npos) << started;
}

TEST(CommandLauncherTest, ReportsTheCommandsExitStatus) {
  auto launcher = CommandLauncher::Prepare({"sh", "-c", "exit 3"});
  ASSERT_TRUE(launcher.ok());
  ASSERT_TRUE((*launcher)->Start().ok());
  int code = -1;
  for (int i = 0; i < 500 && !(*launcher)->Exited(&code); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(code, 3);
}

TEST(CommandLauncherTest, AFailedForkLeavesNoPipeOpen) {
  const int before = OpenFdCount();
  auto launcher = CommandLauncher::PrepareForTesting({"true"}, [] {
    errno = EAGAIN;
    return pid_t{-1};
  });
  ASSERT_FALSE(launcher.ok());
  EXPECT_NE(launcher.status().message().find("fork"), absl::string_view::npos)
      << launcher.status();
  EXPECT_EQ(OpenFdCount(), before);
}

TEST(CommandLauncherTest, AFailedPipeLeavesNoPipeOpen) {
  // With the descriptor limit just above what is open, the first pipe, or
  // the second, cannot be made: either way Prepare must close what it made.
  base::UniqueFd probe(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(probe.valid());
  const rlim_t lowest_free = static_cast<rlim_t>(probe.get());
  probe.Reset();
  rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int before = OpenFdCount();
  int pipe_failures = 0;
  for (rlim_t extra = 0; extra <= 4; ++extra) {
    rlimit low = saved;
    low.rlim_cur = lowest_free + extra;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
    absl::StatusOr<std::unique_ptr<CommandLauncher>> launcher =
        CommandLauncher::Prepare({"true"});
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
    if (!launcher.ok()) {
      EXPECT_NE(launcher.status().message().find("pipe"), absl::string_view::npos)
          << launcher.status();
      ++pipe_failures;
    }
    launcher = absl::InternalError("dropped");  // never started: the child exits
    EXPECT_EQ(OpenFdCount(), before) << "limit " << low.rlim_cur;
  }
  // No room for one pipe at the first two limits; with the descriptors
  // open below the first free one (as in a fresh test), room for one pipe
  // only at the third.
  EXPECT_GE(pipe_failures, 2);
}

TEST(CommandLauncherTest, NoPipeOutlivesTheLauncher) {
  const int before = OpenFdCount();
  {
    auto never_started = CommandLauncher::Prepare({"true"});
    ASSERT_TRUE(never_started.ok());
  }
  EXPECT_EQ(OpenFdCount(), before);
  {
    auto started = CommandLauncher::Prepare({"sh", "-c", "exit 0"});
    ASSERT_TRUE(started.ok());
    ASSERT_TRUE((*started)->Start().ok());
    int code = -1;
    for (int i = 0; i < 500 && !(*started)->Exited(&code); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(code, 0);
  }
  EXPECT_EQ(OpenFdCount(), before);
}

}  // namespace
}  // namespace profcpu::collector
