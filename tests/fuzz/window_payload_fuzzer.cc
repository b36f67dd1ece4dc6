// A window payload read back from the agent's spool (fleet/agent/
// window_payload.h) after a restart: whatever the disk holds, decoding ends
// with a window or an error, never reads past the bytes, and a window that
// decodes encodes back to the same bytes.
#include <string>

#include "fleet/agent/window_payload.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes = profcpu::fuzz::AsText(data, size);
  auto window = profcpu::fleet::DecodeWindowPayload(std::string_view(bytes.data(), bytes.size()));
  if (window.ok()) {
    Check(profcpu::fleet::EncodeWindowPayload(*window) == std::string(bytes),
          "a decoded window does not encode back to the same bytes");
  }
  return 0;
}
