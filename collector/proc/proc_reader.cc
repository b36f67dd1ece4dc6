#include "collector/proc/proc_reader.h"

#include <dirent.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/errno_status.h"
#include "base/file_io.h"

namespace profcpu::collector {
namespace {

// /proc/PID/maps of a huge process can reach megabytes; more than this is
// not a real address space.
constexpr size_t kMaxMapsBytes = 256 << 20;

bool ParseHex(absl::string_view text, uint64_t* value) {
  return !text.empty() && absl::SimpleHexAtoi(text, value);
}

// Splits off the next space-separated field.
absl::string_view NextField(absl::string_view* line) {
  *line = absl::StripLeadingAsciiWhitespace(*line);
  size_t end = line->find(' ');
  absl::string_view field = line->substr(0, end);
  line->remove_prefix(end == absl::string_view::npos ? line->size() : end);
  return field;
}

}  // namespace

std::vector<pid_t> ListProcesses(const std::string& proc) {
  std::vector<pid_t> pids;
  DIR* dir = ::opendir(proc.c_str());
  if (dir == nullptr) return pids;
  while (dirent* entry = ::readdir(dir)) {
    int pid;
    if (absl::SimpleAtoi(entry->d_name, &pid) && pid > 0) pids.push_back(pid);
  }
  ::closedir(dir);
  std::sort(pids.begin(), pids.end());
  return pids;
}

absl::StatusOr<std::vector<pid_t>> ListThreads(pid_t pid, const std::string& proc) {
  std::string path = absl::StrCat(proc, "/", pid, "/task");
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no process with pid ", pid));
    return base::ErrnoStatus(errno, absl::StrCat("open ", path));
  }
  std::vector<pid_t> tids;
  while (dirent* entry = ::readdir(dir)) {
    int tid;
    if (absl::SimpleAtoi(entry->d_name, &tid) && tid > 0) tids.push_back(tid);
  }
  ::closedir(dir);
  std::sort(tids.begin(), tids.end());
  return tids;
}

std::vector<recording::Mmap> ParseProcMaps(absl::string_view text, pid_t pid, uint64_t time_ns) {
  std::vector<recording::Mmap> mappings;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    // start-end perms offset major:minor inode [path]
    absl::string_view range = NextField(&line);
    absl::string_view perms = NextField(&line);
    absl::string_view offset = NextField(&line);
    absl::string_view device = NextField(&line);
    absl::string_view inode = NextField(&line);
    absl::string_view path = absl::StripLeadingAsciiWhitespace(line);
    size_t dash = range.find('-');
    size_t colon = device.find(':');
    recording::Mmap m;
    uint64_t start, end, major, minor;
    if (dash == absl::string_view::npos || colon == absl::string_view::npos || perms.size() < 4 ||
        !ParseHex(range.substr(0, dash), &start) || !ParseHex(range.substr(dash + 1), &end) ||
        end <= start || !ParseHex(offset, &m.file_offset) ||
        !ParseHex(device.substr(0, colon), &major) || !ParseHex(device.substr(colon + 1), &minor) ||
        !absl::SimpleAtoi(inode, &m.inode)) {
      continue;
    }
    if (perms[2] != 'x') continue;  // only code matters for stacks
    m.time_ns = time_ns;
    m.pid = static_cast<uint32_t>(pid);
    m.tid = static_cast<uint32_t>(pid);
    m.start = start;
    m.length = end - start;
    m.dev_major = static_cast<uint32_t>(major);
    m.dev_minor = static_cast<uint32_t>(minor);
    m.prot = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0);
    m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
    // perf calls unnamed memory "//anon"; keep its convention so tools agree.
    m.filename = path.empty() ? "//anon" : std::string(path);
    m.synthesized = true;
    mappings.push_back(std::move(m));
  }
  return mappings;
}

absl::StatusOr<std::vector<recording::Mmap>> ReadProcMaps(pid_t pid, uint64_t time_ns,
                                                          const std::string& proc) {
  auto text = base::ReadFileBounded(absl::StrCat(proc, "/", pid, "/maps"), kMaxMapsBytes);
  if (!text.ok()) return text.status();
  return ParseProcMaps(*text, pid, time_ns);
}

absl::StatusOr<std::string> ReadThreadName(pid_t pid, pid_t tid, const std::string& proc) {
  auto text = base::ReadFileBounded(absl::StrCat(proc, "/", pid, "/task/", tid, "/comm"), 256);
  if (!text.ok()) return text.status();
  return std::string(absl::StripSuffix(*text, "\n"));
}

std::vector<uint32_t> ParseNamespacePids(absl::string_view status_text) {
  // The kernel nests at most 32 PID namespaces (MAX_PID_NS_LEVEL) and prints
  // one NStgid line; the recording holds at most 64 pids (record_codec.cc), so
  // anything else is not a status file to trust.
  constexpr size_t kMaxDepth = 64;
  std::vector<uint32_t> pids;
  for (absl::string_view line : absl::StrSplit(status_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "NStgid:")) continue;
    for (absl::string_view field : absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      uint32_t value;
      if (!absl::SimpleAtoi(field, &value) || pids.size() == kMaxDepth) return {};
      pids.push_back(value);
    }
    break;
  }
  return pids;
}

absl::StatusOr<std::vector<uint32_t>> ReadNamespacePids(pid_t pid, const std::string& proc) {
  auto text = base::ReadFileBounded(absl::StrCat(proc, "/", pid, "/status"), 64 << 10);
  if (!text.ok()) return text.status();
  std::vector<uint32_t> pids = ParseNamespacePids(*text);
  if (pids.empty()) pids.push_back(static_cast<uint32_t>(pid));
  return pids;
}

absl::StatusOr<pid_t> ReadThreadGroupId(pid_t tid, const std::string& proc) {
  auto text = base::ReadFileBounded(absl::StrCat(proc, "/", tid, "/status"), 64 << 10);
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Tgid:")) continue;
    int32_t tgid;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &tgid) && tgid > 0) return tgid;
    break;
  }
  return absl::DataLossError(absl::StrCat(proc, "/", tid, "/status has no Tgid line"));
}

absl::StatusOr<std::string> ReadCommandLine(pid_t pid, const std::string& proc) {
  bool truncated = false;
  auto text = base::ReadFileBounded(absl::StrCat(proc, "/", pid, "/cmdline"), 64 << 10,
                                    /*truncate_ok=*/true, &truncated);
  if (!text.ok()) return text.status();
  std::string line = std::move(*text);
  while (!line.empty() && line.back() == '\0') line.pop_back();
  std::replace(line.begin(), line.end(), '\0', ' ');
  if (truncated) line += " ...";
  return line;
}

}  // namespace profcpu::collector
