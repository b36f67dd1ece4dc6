// Replays one recording's -callgraph dwarf or fp+cfi samples through one CFI
// unwinder (bench/unwinders.sh runs it once per unwinder, each in its own
// process so that its peak RSS is its own): the frames each sample got, how
// many walks reached the thread's first frame, the time spent inside the
// unwinder per sample, and peak RSS. `none` reads the recording without
// unwinding: the RSS the replay costs anyway.
//
// Usage: unwinders_bench RUN_DIR libdwfl|libunwind|none [CHAINS_OUT]
// CHAINS_OUT gets one line per sample (its user chain, hex; "cut" at the
// end when the unwinder said it stopped early), for
// bench/unwinders.py to compare the two unwinders' chains sample by sample.
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "base/rooted_open.h"
#include "recording/recording_reader.h"
#include "recording/run_folder.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/libunwind_unwinder.h"

namespace {

namespace symbolize = profcpu::symbolize;
namespace recording = profcpu::recording;

// The recorded processes have exited; their files are still where they were.
class HostFiles : public symbolize::ProcessFiles {
 public:
  explicit HostFiles(std::shared_ptr<profcpu::base::RootDir> root) : root_(std::move(root)) {}
  std::shared_ptr<profcpu::base::RootDir> RootFor(uint32_t) const override { return root_; }
  uint32_t NamespacePid(uint32_t pid) const override { return pid; }

 private:
  std::shared_ptr<profcpu::base::RootDir> root_;
};

// The thread's CPU time, not wall time: on a shared machine a preempted
// replay would otherwise charge the wait to the unwinder.
uint64_t Nanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: unwinders_bench RUN_DIR libdwfl|libunwind|none [CHAINS_OUT]\n");
    return 2;
  }
  const std::string which = argv[2];
  auto root = profcpu::base::RootDir::Open("/");
  if (!root.ok()) return 1;
  HostFiles files(*root);
  std::unique_ptr<symbolize::CfiUnwinder> unwinder;
  if (which == "libdwfl") {
    unwinder = std::make_unique<symbolize::DwarfUnwinder>(&files);
  } else if (which == "libunwind") {
    unwinder = std::make_unique<symbolize::LibunwindUnwinder>(&files);
  } else if (which != "none") {
    std::fprintf(stderr, "unknown unwinder %s\n", which.c_str());
    return 2;
  }
  auto reader = recording::RecordingReader::Open(std::string(argv[1]) + "/" + recording::kRecordingFile);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", std::string(reader.status().message()).c_str());
    return 1;
  }
  FILE* chains = argc > 3 ? std::fopen(argv[3], "w") : nullptr;

  // What one reading of the clock costs (a system call): taken off each
  // sample's time.
  uint64_t clock_ns = 0;
  {
    const uint64_t first = Nanos();
    for (int i = 0; i < 1000; ++i) Nanos();
    clock_ns = (Nanos() - first) / 1001;
  }

  symbolize::AddressSpaceTracker spaces;
  recording::Header header;
  uint64_t samples = 0, frames = 0, rooted = 0, truncated = 0, unwind_ns = 0;
  std::vector<uint64_t> timed;  // each sample's time in the unwinder
  recording::Record record;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->NextInto(&record);
    if (!more.ok()) {
      std::fprintf(stderr, "%s\n", std::string(more.status().message()).c_str());
      return 1;
    }
    if (!*more) break;
    if (auto* h = std::get_if<recording::Header>(&record)) header = *h;
    if (auto* m = std::get_if<recording::Mmap>(&record)) spaces.OnMmap(*m);
    if (auto* c = std::get_if<recording::Comm>(&record)) spaces.OnComm(*c);
    if (auto* f = std::get_if<recording::Fork>(&record)) spaces.OnFork(*f);
    auto* sample = std::get_if<recording::Sample>(&record);
    if (sample == nullptr || sample->user_regs_abi == 0) continue;
    const bool repair = header.callgraph == "fp+cfi";
    symbolize::UnwoundStack stack;
    if (unwinder != nullptr) {
      const uint64_t start = Nanos();
      stack = repair ? unwinder->RepairLeaf(
                           symbolize::StackCopyOf(*sample, header.user_regs_mask),
                           sample->user_ips, spaces)
                     : unwinder->Unwind(*sample, header.user_regs_mask, spaces);
      const uint64_t end = Nanos();
      const uint64_t took = end - start > clock_ns ? end - start - clock_ns : 0;
      unwind_ns += took;
      timed.push_back(took);
    } else {
      stack.ips = sample->user_ips;
    }
    ++samples;
    frames += stack.ips.size();
    // fp+cfi: a chain the repair left as the kernel gave it is "rooted"
    // unless the repair said the copy ended first.
    if (stack.truncated) {
      ++truncated;
    } else {
      ++rooted;
    }
    if (chains != nullptr) {
      for (uint64_t ip : stack.ips) std::fprintf(chains, "%llx ", static_cast<unsigned long long>(ip));
      std::fputs(stack.truncated ? "cut\n" : "\n", chains);
    }
  }
  if (chains != nullptr) std::fclose(chains);
  // VmHWM, not getrusage's ru_maxrss: that keeps the peak of the process
  // before exec (the python that started this one).
  long peak_kb = -1;
  if (FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof(line), status) != nullptr) {
      if (std::sscanf(line, "VmHWM: %ld kB", &peak_kb) == 1) break;
    }
    std::fclose(status);
  }
  // Warm: the second half of the samples, after the files were opened and
  // the CFI read (the first half holds that cost).
  uint64_t warm_ns = 0;
  for (size_t i = timed.size() / 2; i < timed.size(); ++i) warm_ns += timed[i];
  const double warm_us =
      timed.size() < 2 ? 0 : static_cast<double>(warm_ns) / 1e3 / static_cast<double>(timed.size() - timed.size() / 2);
  std::printf("{\"unwinder\": \"%s\", \"callgraph\": \"%s\", \"samples\": %llu, \"frames\": %llu, "
              "\"rooted\": %llu, \"truncated\": %llu, \"unwind_s\": %.6f, \"warm_us\": %.3f, "
              "\"max_rss_kb\": %ld",
              which.c_str(), header.callgraph.c_str(), static_cast<unsigned long long>(samples),
              static_cast<unsigned long long>(frames), static_cast<unsigned long long>(rooted),
              static_cast<unsigned long long>(truncated), static_cast<double>(unwind_ns) / 1e9,
              warm_us, peak_kb);
  if (unwinder != nullptr) {
    const symbolize::LeafRepairStats& leaf = unwinder->stats().leaf;
    std::printf(", \"stack_exhausted\": %llu, \"frame_limit\": %llu, \"repaired\": %llu, "
                "\"frames_added\": %llu, \"unchanged\": %llu, \"cfi_whole\": %llu, "
                "\"cfi_only\": %llu, \"no_splice\": %llu, \"mismatch\": %llu",
                static_cast<unsigned long long>(unwinder->stats().stack_exhausted),
                static_cast<unsigned long long>(unwinder->stats().frame_limit),
                static_cast<unsigned long long>(leaf.repaired),
                static_cast<unsigned long long>(leaf.frames_added),
                static_cast<unsigned long long>(leaf.unchanged),
                static_cast<unsigned long long>(leaf.cfi_whole),
                static_cast<unsigned long long>(leaf.cfi_only),
                static_cast<unsigned long long>(leaf.no_splice),
                static_cast<unsigned long long>(leaf.mismatch));
  }
  std::printf("}\n");
  return 0;
}
