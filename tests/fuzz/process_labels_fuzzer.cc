// What the agent reads of a process to label it (fleet/agent/process_labels.h):
// cgroup paths, /proc/PID/maps and /proc/PID/stat text are the target's to
// shape (a cgroup name, a mapped file's path, a comm with parentheses).
#include "fleet/agent/process_labels.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text = profcpu::fuzz::AsText(data, size);
  const std::string uid = profcpu::fleet::PodUidFromCgroup(text);
  Check(uid.empty() || uid.size() == 36, "a pod uid that is not a uid");
  Check(uid.find_first_not_of("0123456789abcdefABCDEF-") == std::string::npos,
        "a pod uid with characters a folder name must not have");
  const std::string runtime = profcpu::fleet::DotnetRuntimeFromMaps(text);
  Check(runtime.empty() || runtime.rfind("dotnet", 0) == 0, "a runtime that is not .NET");
  Check(runtime.size() <= 7 + 64, "a runtime version longer than the cap");
  Check(runtime.find_first_of("/\n\t") == std::string::npos, "a runtime label with a path");
  (void)profcpu::fleet::StartTimeFromStat(text);
  return 0;
}
