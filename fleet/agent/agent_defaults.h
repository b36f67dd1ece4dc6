// The agent's defaults, and why: what a node pays for being profiled all
// the time is the first thing its owners ask.
#ifndef PROFCPU_FLEET_AGENT_AGENT_DEFAULTS_H_
#define PROFCPU_FLEET_AGENT_AGENT_DEFAULTS_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "collector/collection_options.h"

namespace profcpu::fleet {

// 19 samples a second per CPU: about 1,100 a minute of a busy core, enough
// for a function at 1% to show over a few minutes, at a cost the BPF
// backend keeps flat (stacks are counted in the kernel). A prime, so the
// sampling never falls in step with work that runs every 10, 50 or 100 ms.
inline constexpr int kAgentFrequencyHz = 19;
// 30 s: a window is visible in the store 30 s after it starts (the issue's
// "a minute later"), and a node makes 3 INSERTs per window: 6 a minute,
// which a shard takes from hundreds of nodes (many small inserts are what
// ClickHouse handles worst). Longer windows cost less per sample (a window
// pays the collector's setup and the naming of its new locations once).
inline constexpr absl::Duration kAgentWindow = absl::Seconds(30);
// An hour of windows of a busy 16-CPU node is a few MB: 256 MB rides out
// a long outage.
inline constexpr int kAgentSpoolMegabytes = 256;

// What naming loads (symbol tables, debug files, perf maps) kept for the
// next windows: the modules a node's busy processes run, not every binary
// it ever sampled (least recently used go first).
inline constexpr uint64_t kAgentSymbolCacheBytes = uint64_t{48} << 20;

// The DWARF a module may have for the agent to read it (its .debug_*
// sections, decompressed); bigger ones are named from their ELF symbol
// tables, without inlined frames or lines. libdw holds all of a file's
// sections while it is read, and the units a window reaches cost about as
// much again: a busy process with 65 MB of DWARF (profcpu's own
// RelWithDebInfo build) took the agent to 130-310 MB resident, and being
// over the cache's cap it was read again every window. 16 MB keeps a
// window's naming well under the agent's 100 MB and still reads the debug
// files of common libraries (libc's is a few MB).
inline constexpr uint64_t kAgentMaxDwarfBytes = uint64_t{16} << 20;

// The agent asks the store for counts only: a larger answer is hostile.
inline constexpr uint64_t kAgentMaxAnswerBytes = uint64_t{1} << 20;

// $TMPDIR/profcpu-agent-PID (else /tmp/...).
std::string DefaultAgentWorkDir();

// What every window's collection does besides the flags: perf maps and the
// .NET runtime's events are left alone (no EventPipe session per window), a
// ring buffer sized for a low rate, frame-pointer stacks (the BPF backend
// counts them in the kernel).
void ApplyAgentSamplingDefaults(collector::CollectionOptions* options);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_AGENT_DEFAULTS_H_
