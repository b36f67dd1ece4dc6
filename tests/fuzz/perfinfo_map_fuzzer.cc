// .NET's perfinfo-PID.map ("ImageLoad;PATH;GUID;BASE;" lines), written by the
// target (symbolize/perfinfo_map.h).
#include <cstring>

#include "symbolize/perfinfo_map.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto map = profcpu::symbolize::PerfInfoMap::Parse(profcpu::fuzz::AsText(data, size));
  Check(map.images.size() <= profcpu::symbolize::PerfInfoMap::kMaxImages, "too many images kept");
  for (size_t i = 0; i + 8 <= size && i < 32 * 8; i += 8) {
    uint64_t address;
    std::memcpy(&address, data + i, 8);
    if (const auto* image = map.ImageAt(address)) {
      Check(image->base <= address && image->base != 0, "ImageAt chose an image above the address");
    }
  }
  for (const auto& image : map.images) {
    Check(map.ImageFor(image.path) != nullptr, "ImageFor misses a loaded image");
  }
  return 0;
}
