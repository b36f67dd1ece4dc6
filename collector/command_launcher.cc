#include "collector/command_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/errno_status.h"
#include "base/status_macros.h"

namespace profcpu::collector {

namespace {

// Both ends of a pipe, each owned, so that every way out of Prepare (a
// second pipe or the fork failing) closes what was opened.
struct Pipe {
  base::UniqueFd read;
  base::UniqueFd write;
};

absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return base::ErrnoStatus(errno, "pipe");
  return Pipe{base::UniqueFd(fds[0]), base::UniqueFd(fds[1])};
}

}  // namespace

absl::StatusOr<std::unique_ptr<CommandLauncher>> CommandLauncher::Prepare(
    const std::vector<std::string>& command) {
  return PrepareForTesting(command, &::fork);
}

absl::StatusOr<std::unique_ptr<CommandLauncher>> CommandLauncher::PrepareForTesting(
    const std::vector<std::string>& command, pid_t (*fork_process)()) {
  if (command.empty()) return absl::InvalidArgumentError("no command given");
  PROFCPU_ASSIGN_OR_RETURN(Pipe go, MakePipe());
  PROFCPU_ASSIGN_OR_RETURN(Pipe error, MakePipe());
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  pid_t pid = fork_process();
  if (pid < 0) return base::ErrnoStatus(errno, "fork");
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on (Reset only closes),
    // and it leaves by _exit, so no destructor runs here.
    go.write.Reset();
    error.read.Reset();
    char byte;
    ssize_t n;
    do {
      n = ::read(go.read.get(), &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) ::_exit(127);  // profcpu gave up before starting us
    ::execvp(argv[0], argv.data());
    int err = errno;
    (void)!::write(error.write.get(), &err, sizeof(err));
    ::_exit(127);
  }
  // The child's ends close here, as go and error go out of scope.
  return std::unique_ptr<CommandLauncher>(
      new CommandLauncher(pid, command[0], std::move(go.write), std::move(error.read)));
}

CommandLauncher::~CommandLauncher() {
  if (reaped_) return;
  int status;
  if (go_.valid()) {
    // Never started: closing the pipe makes the child exit at once.
    go_.Reset();
    ::waitpid(pid_, &status, 0);
  } else {
    // Started and still running (profcpu was stopped first): do not block on
    // it; it carries on and is reaped by init once profcpu exits.
    ::waitpid(pid_, &status, WNOHANG);
  }
}

absl::Status CommandLauncher::Start() {
  char byte = 1;
  if (::write(go_.get(), &byte, 1) != 1) return base::ErrnoStatus(errno, "start command");
  go_.Reset();
  int err = 0;
  ssize_t n;
  do {
    n = ::read(exec_error_.get(), &err, sizeof(err));
  } while (n < 0 && errno == EINTR);
  if (n == sizeof(err)) {
    int status;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat(
          "command '", program_, "' not found",
          program_.find('/') == std::string::npos ? " in PATH" : " (no such file)"));
    }
    return base::ErrnoStatus(err, absl::StrCat("cannot run '", program_, "'"));
  }
  return absl::OkStatus();
}

bool CommandLauncher::Exited(int* exit_code) {
  if (reaped_) return true;
  int status;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return false;
  reaped_ = true;
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

void CommandLauncher::Signal(int signal_number) {
  if (!reaped_) ::kill(pid_, signal_number);
}

absl::StatusOr<std::string> FindProgram(const std::string& program) {
  if (program.empty()) return absl::InvalidArgumentError("empty command name");
  std::vector<std::string> candidates;
  if (program.find('/') != std::string::npos) {
    candidates.push_back(program);
  } else {
    // execvp's default when PATH is unset (glibc: confstr(_CS_PATH)).
    const char* path = std::getenv("PATH");
    for (absl::string_view dir :
         absl::StrSplit(path != nullptr ? path : "/bin:/usr/bin", ':')) {
      candidates.push_back(absl::StrCat(dir.empty() ? "." : dir, "/", program));
    }
  }
  std::string not_executable;
  for (const std::string& candidate : candidates) {
    struct stat st;
    if (::stat(candidate.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (not_executable.empty()) not_executable = candidate;
  }
  if (!not_executable.empty()) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot run '", not_executable, "': it is not executable"));
  }
  return absl::NotFoundError(absl::StrCat(
      "command '", program, "' not found",
      program.find('/') == std::string::npos ? " in PATH" : " (no such file)"));
}

}  // namespace profcpu::collector
