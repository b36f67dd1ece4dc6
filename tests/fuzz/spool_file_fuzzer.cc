// A file of the agent's spool (fleet/agent/spool_file.h) read back after a
// crash or a damaged disk: the parser and the spool that recovers it must
// agree, keep nothing that does not verify, and count what they drop.
#include <string>

#include "fleet/agent/spool.h"
#include "fleet/agent/spool_file.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes = profcpu::fuzz::AsText(data, size);
  auto contents = profcpu::fleet::ParseSpoolFile(bytes);
  auto header = profcpu::fleet::ParseSpoolHeader(bytes);
  if (contents.ok()) {
    Check(header.ok(), "a file parses whole but its header does not");
    Check(profcpu::fleet::EncodeSpoolFile(contents->header.window_id, contents->header.samples,
                                          contents->payload) == bytes,
          "a parsed file does not encode back to the same bytes");
  }

  // The same bytes as a window file an earlier run left in the spool.
  profcpu::fuzz::ScratchDir scratch;
  const std::string dir = scratch.path() + "/spool";
  {
    auto spool = profcpu::fleet::Spool::Open(dir, 1 << 20);
    Check(spool.ok(), "an empty spool does not open");
  }
  {
    FILE* out = fopen((dir + "/" + profcpu::fleet::Spool::FileName(7)).c_str(), "wb");
    Check(out != nullptr, "cannot write the window file");
    if (size > 0) fwrite(data, 1, size, out);
    fclose(out);
  }
  auto spool = profcpu::fleet::Spool::Open(dir, 1 << 20);
  Check(spool.ok(), "a spool with one damaged file does not open");
  auto entry = spool->Oldest();
  auto losses = spool->TakeLosses();
  if (contents.ok() && bytes.size() <= (1 << 20)) {
    Check(entry.has_value() && losses.empty(), "a valid window file was not recovered");
    Check(entry->payload == contents->payload, "the recovered payload differs");
    Check(entry->window_id == contents->header.window_id, "the recovered window id differs");
  } else {
    Check(!entry.has_value(), "a damaged window file was kept");
    Check(losses.size() == 1, "a damaged window file was not counted lost");
    Check(spool->size_bytes() == 0, "a dropped file still counts in the spool's size");
  }
  return 0;
}
