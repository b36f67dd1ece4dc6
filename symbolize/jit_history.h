// How fold's replay learns, without opening a file, which JIT code was at a
// sampled address at the sample's time: an interface the symbolizer's
// JitSources implements from the process's jitdump (jit_sources.h).
//
// Runtimes free and reuse code memory, and move code, so one address can hold
// different methods over a profile. The answer, a generation, becomes part of
// the CodeLocation (code_location.h, `epoch`): locations that differ in time
// are named separately, still one lookup per distinct (address, generation).
#ifndef PROFCPU_SYMBOLIZE_JIT_HISTORY_H_
#define PROFCPU_SYMBOLIZE_JIT_HISTORY_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "recording/records.h"

namespace profcpu::symbolize {

class JitCodeHistory {
 public:
  virtual ~JitCodeHistory() = default;
  // Every mapping record of the replay, in order (a runtime mmaps its
  // jit-PID.dump, which names the file).
  virtual void OnMmap(const recording::Mmap& mmap) = 0;
  // The generation (1-based) of the code at `address` of `pid` at `time_ns`
  // (CLOCK_MONOTONIC, as samples and jitdumps are stamped), or 0 when no
  // timed source knows it.
  virtual uint32_t Generation(uint32_t pid, uint64_t address, uint64_t time_ns) = 0;

  // What kind of code an address holds, for repairs that depend on it (a
  // .NET method entered through on-stack replacement, "[OptimizedTier1OSR]",
  // loses its caller in a frame-pointer walk: fold/dotnet_osr_replay.h).
  // Whether any name in `pid`'s JIT files contains `part`: one scan, so a
  // replay can skip the per-address question for every other process.
  virtual bool NamesAnyCode(uint32_t pid, absl::string_view part) {
    (void)pid;
    (void)part;
    return false;
  }
  // The name of the code at `address` of `pid` in `generation` (as
  // Generation gave it), or "" when no file names it.
  virtual std::string CodeName(uint32_t pid, uint64_t address, uint32_t generation) {
    (void)pid;
    (void)address;
    (void)generation;
    return "";
  }
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_JIT_HISTORY_H_
