// Symbolizer micro-benchmark (bench/symbolize.sh runs it): on one ELF file
// with DWARF, how long until the first address is named (cold start: ELF
// tables, debug file search, DWARF unit index, the first unit's function
// index) and how many distinct addresses per second are named after that,
// inlined frames and lines included.
//
// Usage: symbolize_bench FILE [ADDRESSES]
// Addresses are file offsets spread evenly over the executable segments.
#include <sys/stat.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/rooted_open.h"
#include "symbolize/module_symbolizer.h"

namespace {

double Seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: symbolize_bench FILE [ADDRESSES]\n");
    return 2;
  }
  const std::string path = argv[1];
  const size_t count = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 200000;
  auto root = profcpu::base::RootDir::Open("/");
  if (!root.ok()) return 1;
  profcpu::symbolize::Module module;
  module.path = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 1;

  const double start = Seconds();
  auto loaded = profcpu::symbolize::LoadModuleSymbolizer(module, root->get(), {});
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", std::string(loaded.status().message()).c_str());
    return 1;
  }
  profcpu::symbolize::ModuleSymbolizer& symbolizer = *loaded->symbolizer;
  std::vector<uint64_t> offsets;
  uint64_t text = 0;
  for (const auto& segment : symbolizer.segments()) {
    if (segment.executable) text += segment.file_size;
  }
  for (const auto& segment : symbolizer.segments()) {
    if (!segment.executable || text == 0) continue;
    const size_t share = static_cast<size_t>(count * segment.file_size / text);
    for (size_t i = 0; i < share; ++i) {
      offsets.push_back(segment.file_offset + segment.file_size * i / std::max<size_t>(share, 1));
    }
  }
  if (offsets.empty()) return 1;
  (void)symbolizer.Lookup(offsets[offsets.size() / 2]);
  const double cold = Seconds() - start;

  size_t named = 0, inlined = 0, with_lines = 0;
  const double begin = Seconds();
  for (uint64_t offset : offsets) {
    std::vector<profcpu::symbolize::Frame> frames = symbolizer.Lookup(offset);
    if (!frames.empty()) ++named;
    if (frames.size() > 1) ++inlined;
    if (!frames.empty() && frames[0].line > 0) ++with_lines;
  }
  const double elapsed = Seconds() - begin;
  std::printf("file                 %s (%.1f MB, %s)\n", path.c_str(), st.st_size / 1e6,
              symbolizer.has_dwarf() ? "DWARF" : "no DWARF");
  std::printf("cold start           %.1f ms (symbol tables, DWARF index, first lookup)\n",
              cold * 1e3);
  std::printf("distinct addresses   %zu in %.2f s: %.0f addresses/s\n", offsets.size(), elapsed,
              offsets.size() / elapsed);
  std::printf("named                %zu (%zu with inlined frames, %zu with a source line)\n", named,
              inlined, with_lines);
  return 0;
}
