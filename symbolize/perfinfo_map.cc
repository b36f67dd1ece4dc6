#include "symbolize/perfinfo_map.h"

#include <vector>

#include "absl/strings/str_split.h"
#include "symbolize/parse_hex.h"

namespace profcpu::symbolize {

PerfInfoMap PerfInfoMap::Parse(absl::string_view text) {
  PerfInfoMap map;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    ++map.lines;
    if (line.size() > kMaxLine) {
      ++map.malformed;
      continue;
    }
    std::vector<absl::string_view> fields = absl::StrSplit(line, ';');
    if (fields[0] != "ImageLoad") {
      ++map.other_events;
      continue;
    }
    // ImageLoad;PATH;GUID;BASE; (the trailing ';' leaves an empty last field)
    if (fields.size() < 4 || fields[1].empty() || (fields.size() > 4 && !fields[4].empty()) ||
        fields.size() > 5) {
      ++map.malformed;
      continue;
    }
    ImageLoad image;
    image.path = std::string(fields[1]);
    image.guid = std::string(fields[2]);
    // glibc prints a null %p as "(nil)"; the PAL as 0x0 or 0.
    if (fields[3] != "(nil)" && !ParseHex(fields[3], &image.base)) {
      ++map.malformed;
      continue;
    }
    if (map.images.size() >= kMaxImages) break;
    map.images.push_back(std::move(image));
  }
  return map;
}

const ImageLoad* PerfInfoMap::ImageAt(uint64_t address) const {
  const ImageLoad* best = nullptr;
  for (const ImageLoad& image : images) {
    if (image.base != 0 && image.base <= address && (best == nullptr || image.base > best->base)) {
      best = &image;
    }
  }
  return best;
}

const ImageLoad* PerfInfoMap::ImageFor(absl::string_view path) const {
  for (const ImageLoad& image : images) {
    if (image.path == path) return &image;
  }
  return nullptr;
}

}  // namespace profcpu::symbolize
