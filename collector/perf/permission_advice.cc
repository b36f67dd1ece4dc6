#include "collector/perf/permission_advice.h"

#include <unistd.h>

#include <cstdint>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/file_io.h"
#include "collector/perf/perf_event.h"

namespace profcpu::collector {
namespace {

// capability numbers from linux/capability.h
constexpr int kCapSysPtrace = 19;
constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;

// The value of a "Key:\tvalue" line of a /proc status file.
std::string StatusField(const std::string& path, absl::string_view key) {
  auto text = base::ReadFileBounded(path, 64 << 10);
  if (!text.ok()) return "";
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (absl::ConsumePrefix(&line, key) && absl::ConsumePrefix(&line, ":")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return "";
}

}  // namespace

PermissionFacts GatherPermissionFacts(pid_t tid, bool kernel_frames) {
  PermissionFacts facts;
  facts.paranoid = PerfEventParanoid();
  facts.kernel_frames = kernel_frames;
  uint64_t caps = 0;
  (void)absl::SimpleHexAtoi(StatusField("/proc/self/status", "CapEff"), &caps);
  auto has = [caps](int cap) { return (caps >> cap) & 1; };
  facts.has_perfmon = has(kCapPerfmon) || has(kCapSysAdmin);
  facts.has_sys_ptrace = has(kCapSysPtrace);
  // Uid: real, effective, saved, fs. The kernel's ptrace check compares them all.
  std::vector<std::string> uids =
      absl::StrSplit(StatusField(absl::StrCat("/proc/", tid, "/status"), "Uid"),
                     absl::ByAnyChar(" \t"), absl::SkipEmpty());
  std::string mine = absl::StrCat(::getuid());
  facts.all_tasks = tid < 0;
  facts.target_is_ours = facts.all_tasks || !uids.empty();
  for (const std::string& uid : uids) facts.target_is_ours &= uid == mine;
  return facts;
}

std::string PermissionAdvice(const PermissionFacts& f) {
  std::vector<std::string> missing;
  if (!f.target_is_ours && !f.has_sys_ptrace) {
    missing.push_back("The process belongs to another user: profcpu needs CAP_SYS_PTRACE");
  }
  // perf_event_paranoid (Documentation/admin-guide/perf-security.rst):
  // 2 forbids kernel profiling, 3 (Debian) all profiling, without CAP_PERFMON.
  if (f.all_tasks && !f.has_perfmon && f.paranoid >= 1) {
    // perf-security.rst: paranoid >= 1 reserves per-CPU (system-wide) events.
    missing.push_back(absl::StrCat(
        "Profiling every process or a whole container uses per-CPU events, which "
        "kernel.perf_event_paranoid=", f.paranoid,
        " reserves to CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8): grant it, or run "
        "'sysctl kernel.perf_event_paranoid=0'"));
  } else if (!f.has_perfmon && (f.paranoid >= 3 || (f.paranoid >= 2 && f.kernel_frames))) {
    missing.push_back(absl::StrCat(
        missing.empty() ? "K" : "k", "ernel.perf_event_paranoid is ", f.paranoid, ", which forbids ",
        f.paranoid >= 3 ? "perf events" : "kernel stacks",
        " without CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8): grant it, or run "
        "'sysctl kernel.perf_event_paranoid=1'"));
  }
  if (missing.empty()) {
    return "Profcpu holds the capabilities it needs, so a seccomp filter probably refused "
           "the call (container runtimes' default profiles block perf_event_open): run the "
           "container with profcpu's seccomp profile (containers/) or without seccomp "
           "filtering";
  }
  return absl::StrJoin(missing, "; and ");
}

}  // namespace profcpu::collector
