// What the spool keeps of one window and the sender needs to deliver it:
// its three INSERT bodies (RowBinary, in the store's column order), the
// stacks and frames they carry (marked delivered once the window is) and
// what the retry check asks of the store (the window's id and seconds).
// A spool file is read back after a restart: decoding checks every size
// against what is left and against caps.
#ifndef PROFCPU_FLEET_AGENT_WINDOW_PAYLOAD_H_
#define PROFCPU_FLEET_AGENT_WINDOW_PAYLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "fleet/agent/window_rows.h"

namespace profcpu::fleet {

struct WindowPayload {
  uint64_t window_id = 0;
  uint32_t first_second = 0;  // the samples' time range, UTC seconds
  uint32_t last_second = 0;
  uint64_t samples = 0;       // the sum of the samples' counts
  uint64_t sample_rows = 0;
  std::string node;
  std::vector<uint64_t> stack_ids;  // the stacks and frames carried
  std::vector<uint64_t> frame_ids;
  std::string frames_body;  // frames_local(id, name, module, build_id)
  std::string stacks_body;  // stacks_local(id, frame_ids)
  std::string samples_body; // samples_local(time, labels..., stack_id, count, window)
};

// The window's rows, leaving out stacks and frames already delivered to its
// shard (`delivered`): only delivery marks them, so a window lost from the
// spool never leaves a later window's stacks without names.
WindowPayload BuildWindowPayload(const WindowRows& rows, uint64_t window_id,
                                 const absl::flat_hash_set<uint64_t>& delivered);

std::string EncodeWindowPayload(const WindowPayload& payload);
absl::StatusOr<WindowPayload> DecodeWindowPayload(std::string_view bytes);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_WINDOW_PAYLOAD_H_
