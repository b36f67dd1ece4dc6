// /proc/PID/maps, status, environ and cgroup text. The kernel writes them,
// but file names in maps and the whole environment are the target's, and the
// readers must hold up to whatever a future kernel prints.
#include "collector/proc/cgroup.h"
#include "collector/proc/proc_reader.h"
#include "collector/proc/process_environment.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text = profcpu::fuzz::AsText(data, size);
  auto maps = profcpu::collector::ParseProcMaps(text, 42, 1000);
  for (const auto& m : maps) {
    Check(m.pid == 42 && m.time_ns == 1000, "a synthesized mapping lost its pid or time");
    Check(m.length > 0, "an empty mapping was synthesized");
  }
  auto pids = profcpu::collector::ParseNamespacePids(text);
  Check(pids.size() <= 64, "more namespace pids than the recording allows");

  // The environment decides where profcpu looks for JIT files: the paths are
  // the target's to choose (they are opened inside its root), but never empty.
  auto environment = profcpu::collector::ProcessEnvironment::Parse(text);
  Check(!environment.DotnetPerfMapDirectory().empty(), "no perf map directory");
  Check(!environment.TempDirectory().empty(), "no temporary directory");
  (void)environment.DotnetPerfMapEnabled();

  (void)profcpu::collector::CgroupV2Path(text);
  (void)profcpu::collector::ContainerIdFromCgroup(text);
  return 0;
}
