#include "collector/collection_header.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "base/file_io.h"
#include "collector/bpf_collection.h"
#include "collector/perf/perf_record_parser.h"
#include "collector/profile_mode.h"

namespace profcpu::collector {
namespace {

int64_t RealtimeNowNs() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string ReadTrimmed(const char* path) {
  auto text = base::ReadFileBounded(path, 4096);
  return text.ok() ? std::string(absl::StripAsciiWhitespace(*text)) : "";
}

}  // namespace

recording::Header MakeCollectionHeader(const CollectionOptions& options,
                                       const SamplerOptions& sampler, const std::string& target,
                                       uint64_t start_ns) {
  recording::Header h;
  h.profcpu_version = options.profcpu_version;
  h.event_name = sampler.event.name;
  h.event_type = sampler.event.type;
  h.event_config = sampler.event.config;
  h.frequency_mode = options.sampler.frequency_mode;
  h.sample_rate = options.sampler.rate;
  h.clock_id = CLOCK_MONOTONIC;
  h.start_time_ns = start_ns;
  h.start_realtime_ns = RealtimeNowNs();
  h.cpu_count = static_cast<uint32_t>(::sysconf(_SC_NPROCESSORS_CONF));
  h.callgraph = "fp";
  if (sampler.dwarf_stack_size > 0) {
    h.callgraph = "dwarf";
    h.user_regs_mask = kDwarfRegsMask;
    h.user_stack_size = sampler.dwarf_stack_size;
  } else if (sampler.leaf_stack_size > 0) {
    h.callgraph = "fp+cfi";
    h.user_regs_mask = kLeafRegsMask;
    h.user_stack_size = sampler.leaf_stack_size;
  }
  // Off-CPU switch-outs' copies (BPF), whose size is the BPF program's.
  DescribeLeafCopy(options.profile, &h);
  utsname uts;
  if (::uname(&uts) == 0) {
    h.hostname = uts.nodename;
    h.kernel_release = uts.release;
  }
  h.boot_id = ReadTrimmed("/proc/sys/kernel/random/boot_id");
  h.target = target;
  h.command_line = options.command_line;
  h.mode = std::string(ProfileModeName(options.profile.mode));
  h.backend = std::string(SamplingBackendName(options.profile.backend));
  if (options.profile.backend == SamplingBackend::kBpf &&
      options.profile.mode != ProfileMode::kOffCpu && !options.profile.timestamps) {
    h.counted_interval_ns = kCountIntervalNs;
  }
  return h;
}

}  // namespace profcpu::collector
