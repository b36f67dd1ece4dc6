// .NET's perfinfo-PID.map (runtimes before .NET 9, written next to the perf
// map when DOTNET_PerfMapEnabled is on): one "TYPE;VALUE" line per event.
// profcpu reads the image loads, "ImageLoad;PATH;GUID;BASE;" (CoreCLR
// vm/perfinfo.cpp, PerfInfo::LogImage: BASE is the ReadyToRun image's load
// address printed with %p, 0 for images without precompiled code).
//
// Precompiled (ReadyToRun) methods run from those images without perf map
// lines; they are named only by jitdump CODE_LOAD records tagged [PreJIT].
// The image list tells the user which frames needed that, and what they are.
//
// Written by the target: read with a byte cap, a line cap and an entry cap;
// malformed lines are counted and skipped.
#ifndef PROFCPU_SYMBOLIZE_PERFINFO_MAP_H_
#define PROFCPU_SYMBOLIZE_PERFINFO_MAP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace profcpu::symbolize {

struct ImageLoad {
  std::string path;
  std::string guid;
  uint64_t base = 0;  // 0: no precompiled code mapped
};

struct PerfInfoMap {
  std::vector<ImageLoad> images;  // in file order
  uint64_t lines = 0;
  uint64_t malformed = 0;
  uint64_t other_events = 0;  // types other than ImageLoad

  static constexpr size_t kMaxImages = 1 << 20;
  static constexpr size_t kMaxLine = 8192;

  // Parses the whole text (read with a byte cap by the caller).
  static PerfInfoMap Parse(absl::string_view text);

  // The precompiled image whose base is the highest at or below `address`.
  const ImageLoad* ImageAt(uint64_t address) const;
  // The image loaded from `path`, if any.
  const ImageLoad* ImageFor(absl::string_view path) const;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_PERFINFO_MAP_H_
