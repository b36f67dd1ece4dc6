// Reads a .nettrace file with profcpu's NetTrace reader (nettrace/reader.h)
// as profcpu's end of run does (from the file, every event with its stack)
// and prints what it read and how fast, for bench/nettrace.sh:
//
//   nettrace_read_bench FILE [PASSES]
//
// One JSON line: bytes, events, events with a stack, stack frames handed
// out, the fastest pass's seconds, MB/s and events/s, and the process's
// peak RSS (ru_maxrss) after the passes. Each pass opens the file again
// (the page cache holds it after the first), so the figure is the reader's
// cost, not the disk's.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nettrace/reader.h"
#include "nettrace/source.h"

namespace {

struct Pass {
  uint64_t events = 0;
  uint64_t with_stack = 0;
  uint64_t frames = 0;
  uint64_t checksum = 0;  // of the addresses: the stacks are read, not skipped
  double seconds = 0;
  std::string error;
};

Pass ReadOnce(const char* path) {
  Pass pass;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    pass.error = "cannot open the file";
    return pass;
  }
  const auto start = std::chrono::steady_clock::now();
  profcpu::nettrace::NettraceFdSource source(fd);
  profcpu::nettrace::NettraceReader reader(&source);
  profcpu::nettrace::NettraceEvent event;
  while (true) {
    auto more = reader.Next(&event);
    if (!more.ok()) {
      pass.error = std::string(more.status().message());
      break;
    }
    if (!*more) break;
    ++pass.events;
    if (!event.stack.empty()) ++pass.with_stack;
    pass.frames += event.stack.size();
    if (!event.stack.empty()) pass.checksum += event.stack.front();
  }
  pass.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(fd);
  return pass;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s FILE.nettrace [PASSES]\n", argv[0]);
    return 2;
  }
  const int passes = argc == 3 ? std::max(1, std::atoi(argv[2])) : 3;
  struct stat st;
  if (::stat(argv[1], &st) != 0) {
    std::fprintf(stderr, "%s: cannot stat %s\n", argv[0], argv[1]);
    return 1;
  }
  Pass best;
  for (int i = 0; i < passes; ++i) {
    Pass pass = ReadOnce(argv[1]);
    if (!pass.error.empty()) {
      std::fprintf(stderr, "%s: %s\n", argv[0], pass.error.c_str());
      return 1;
    }
    if (i == 0 || pass.seconds < best.seconds) best = pass;
  }
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  const double bytes = static_cast<double>(st.st_size);
  std::printf(
      "{\"bytes\": %.0f, \"events\": %llu, \"events_with_stack\": %llu, \"frames\": %llu, "
      "\"seconds\": %.6f, \"mb_per_s\": %.1f, \"events_per_s\": %.0f, \"peak_rss_kb\": %ld, "
      "\"passes\": %d}\n",
      bytes, static_cast<unsigned long long>(best.events),
      static_cast<unsigned long long>(best.with_stack),
      static_cast<unsigned long long>(best.frames), best.seconds, bytes / 1e6 / best.seconds,
      static_cast<double>(best.events) / best.seconds, usage.ru_maxrss, passes);
  return 0;
}
