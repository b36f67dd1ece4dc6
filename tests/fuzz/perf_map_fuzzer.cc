// A JIT runtime's /tmp/perf-PID.map, written by the (possibly hostile) target
// (symbolize/perf_map.h). Parse (whole text) and Read (streamed from a file in
// chunks) must agree line for line, under default and tiny limits, and every
// lookup must land inside the name table.
#include <unistd.h>

#include <cstring>
#include <string>

#include "symbolize/perf_map.h"
#include "tests/fuzz/fuzz_support.h"

namespace base = profcpu::base;
using profcpu::fuzz::Check;
namespace symbolize = profcpu::symbolize;

namespace {

void CheckAgree(absl::string_view text, const symbolize::PerfMapLimits& limits) {
  symbolize::PerfMap parsed = symbolize::PerfMap::Parse(text, limits);
  profcpu::fuzz::MemFile file(text);
  auto read = symbolize::PerfMap::Read(file.fd(), "fuzz input", limits);
  Check(read.ok(), "reading a memfd perf map failed");
  const symbolize::PerfMapStats& a = parsed.stats();
  const symbolize::PerfMapStats& b = read->stats();
  // (Parse knows the text's size up front and flags a byte cut even when the
  // entry cap stops it first; Read never gets that far.)
  Check(a.entries == b.entries && a.empty_ranges == b.empty_ranges &&
            a.truncated_entries == b.truncated_entries &&
            (a.truncated_entries || a.truncated_bytes == b.truncated_bytes),
        "PerfMap::Parse and PerfMap::Read disagree on the same bytes");
  // The line the byte cap cuts: Parse drops it unseen, Read may already have
  // counted it as overlong (malformed) before reaching the cap.
  uint64_t slack = a.truncated_bytes || a.truncated_entries ? 1 : 0;
  Check(b.lines - a.lines <= slack && b.malformed - a.malformed <= slack &&
            b.lines - a.lines == b.malformed - a.malformed && b.lines >= a.lines,
        "PerfMap::Parse and PerfMap::Read count lines differently");
  Check(a.entries <= limits.max_entries, "more entries kept than the limit");
  (void)parsed.Warnings("fuzz input");

  // Probe addresses taken from the input itself, and the edges of the space.
  for (size_t i = 0; i + 8 <= text.size() && i < 64 * 8; i += 8) {
    uint64_t address;
    std::memcpy(&address, text.data() + i, 8);
    for (uint64_t probe : {address, address - 1, address + 1}) {
      auto x = parsed.Lookup(probe);
      auto y = read->Lookup(probe);
      Check(x.has_value() == y.has_value(), "Parse and Read disagree on a lookup");
      if (x) {
        Check(x->name == y->name && x->offset == y->offset, "lookups name different symbols");
        Check(!x->name.empty(), "a lookup returned an empty name");
      }
    }
  }
  for (uint64_t probe : {uint64_t{0}, UINT64_MAX, uint64_t{0x7f0000000000}}) {
    Check(parsed.Lookup(probe).has_value() == read->Lookup(probe).has_value(),
          "Parse and Read disagree at an edge");
  }
}

// A map read while the runtime was still writing it, then continued from
// the grown file (PerfMap::Continue, as the symbol cache does across agent
// windows), must name everything as one read of the grown file.
void CheckContinued(absl::string_view text, size_t split, const symbolize::PerfMapLimits& limits) {
  profcpu::fuzz::MemFile early(text.substr(0, split));
  auto map = symbolize::PerfMap::Read(early.fd(), "fuzz input", limits);
  Check(map.ok(), "reading a memfd perf map failed");
  profcpu::fuzz::MemFile grown(text);
  base::UniqueFd fd = grown.Reopen();
  Check(::lseek(fd.get(), static_cast<off_t>(map->complete_bytes()), SEEK_SET) >= 0, "lseek");
  Check(map->complete_bytes() <= split, "complete_bytes past what was read");
  Check(map->Continue(fd.get(), "fuzz input", limits).ok(), "continuing a perf map failed");
  auto whole = symbolize::PerfMap::Read(grown.fd(), "fuzz input", limits);
  Check(whole.ok(), "reading a memfd perf map failed");
  if (whole->stats().truncated_bytes || whole->stats().truncated_entries) return;
  Check(map->stats().entries == whole->stats().entries &&
            map->stats().lines == whole->stats().lines &&
            map->stats().malformed == whole->stats().malformed,
        "a continued read counts otherwise than a whole one");
  for (size_t i = 0; i + 8 <= text.size() && i < 64 * 8; i += 8) {
    uint64_t address;
    std::memcpy(&address, text.data() + i, 8);
    for (uint64_t probe : {address, address - 1, address + 1}) {
      auto x = map->Lookup(probe);
      auto y = whole->Lookup(probe);
      Check(x.has_value() == y.has_value(), "continued and whole reads disagree on a lookup");
      if (x) Check(x->name == y->name && x->offset == y->offset, "lookups name different symbols");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text = profcpu::fuzz::AsText(data, size);
  CheckAgree(text, symbolize::PerfMapLimits{});
  symbolize::PerfMapLimits tiny;
  tiny.max_bytes = size / 2;
  tiny.max_entries = 3;
  tiny.max_line = 40;
  CheckAgree(text, tiny);
  if (!text.empty()) {
    const size_t split = static_cast<uint8_t>(text[0]) * text.size() / 256;
    CheckContinued(text, split, symbolize::PerfMapLimits{});
    CheckContinued(text, split, tiny);
  }
  return 0;
}
