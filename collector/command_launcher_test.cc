#include "collector/command_launcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

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

}  // namespace
}  // namespace profcpu::collector
