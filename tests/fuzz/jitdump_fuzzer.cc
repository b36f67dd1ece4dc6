// A JIT runtime's jit-PID.dump, written by the (possibly hostile) target
// (symbolize/jitdump.h): sizes that overflow, records that claim more bytes
// than the file holds, byte-swapped headers. Parse (bytes in memory) and Read
// (pread from a file) must agree, and lookups stay inside the regions.
#include <cstring>

#include "symbolize/jitdump.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace symbolize = profcpu::symbolize;

namespace {

void Probe(const symbolize::Jitdump& dump, const uint8_t* data, size_t size) {
  for (size_t i = 0; i + 16 <= size && i < 48 * 16; i += 16) {
    uint64_t address, time;
    std::memcpy(&address, data + i, 8);
    std::memcpy(&time, data + i + 8, 8);
    for (uint64_t probe : {address, address + 1, address - 1}) {
      uint32_t generation = dump.Generation(probe, time);
      auto match = dump.Lookup(generation, probe);
      if (generation == 0) continue;
      if (match) Check(match->offset <= probe, "a JIT region starts after the address");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes = profcpu::fuzz::AsText(data, size);
  symbolize::JitdumpLimits limits;
  limits.max_regions = 10000;
  limits.max_name_bytes = 1 << 20;
  limits.max_debug_entries = 100000;
  auto parsed = symbolize::Jitdump::Parse(bytes, limits);
  profcpu::fuzz::MemFile file(bytes);
  auto read = symbolize::Jitdump::Read(file.fd(), "fuzz input", limits);
  Check(parsed.ok() == read.ok(), "Jitdump::Parse and Jitdump::Read disagree on the header");
  if (!parsed.ok()) return 0;
  Check(parsed->region_count() == read->region_count() &&
            parsed->stats().records == read->stats().records &&
            parsed->stats().truncated == read->stats().truncated &&
            parsed->stats().stopped_because == read->stats().stopped_because,
        "Jitdump::Parse and Jitdump::Read disagree on the records");
  Check(parsed->region_count() <= limits.max_regions, "more regions than the limit");
  (void)parsed->Warnings("fuzz input");
  Probe(*parsed, data, size);
  return 0;
}
