#include "fleet/agent/agent_defaults.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace profcpu::fleet {

std::string DefaultAgentWorkDir() {
  const char* tmp = std::getenv("TMPDIR");
  return absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/profcpu-agent-", ::getpid());
}

void ApplyAgentSamplingDefaults(collector::CollectionOptions* options) {
  options->sampler.ring_buffer_pages = 64;  // 256 KiB per CPU: seconds of samples at 19 Hz
  options->sampler.leaf_stack_size = 0;
  options->sampler.dwarf_stack_size = 0;
  options->profile.leaf_copy = false;
  options->dotnet_events = false;
  options->manage_dotnet_perfmaps = false;
}

}  // namespace profcpu::fleet
