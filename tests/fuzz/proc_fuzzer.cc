// /proc/PID/maps and /proc/PID/status text. The kernel writes them, but file
// names in maps are the target's (any bytes but '\n', " (deleted)" suffixes)
// and the readers must hold up to whatever a future kernel prints.
#include "collector/proc/proc_reader.h"
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
  return 0;
}
