#include "render/palette.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "render/number_format.h"
#include "render/palette_classify.h"

namespace profcpu::render {
namespace {

struct PaletteEntry {
  Palette palette;
  absl::string_view name;
};

constexpr std::array<PaletteEntry, 16> kPalettes = {{
    {Palette::kHot, "hot"},
    {Palette::kMem, "mem"},
    {Palette::kIo, "io"},
    {Palette::kWakeup, "wakeup"},
    {Palette::kChain, "chain"},
    {Palette::kJava, "java"},
    {Palette::kJs, "js"},
    {Palette::kPerl, "perl"},
    {Palette::kDotnet, "dotnet"},
    {Palette::kRed, "red"},
    {Palette::kGreen, "green"},
    {Palette::kBlue, "blue"},
    {Palette::kAqua, "aqua"},
    {Palette::kYellow, "yellow"},
    {Palette::kPurple, "purple"},
    {Palette::kOrange, "orange"},
}};

std::vector<char32_t> CodePoints(absl::string_view clean) {
  std::vector<char32_t> out;
  out.reserve(clean.size());
  for (size_t i = 0; i < clean.size();) {
    const unsigned char lead = static_cast<unsigned char>(clean[i]);
    const int length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    char32_t value = length == 1 ? lead : lead & (0x7F >> length);
    for (int k = 1; k < length && i + k < clean.size(); ++k) {
      value = (value << 6) | (static_cast<unsigned char>(clean[i + k]) & 0x3F);
    }
    out.push_back(value);
    i += static_cast<size_t>(length);
  }
  return out;
}

// Perl's rand(1) right after srand(seed): Perl carries its own drand48
// (util.c, Perl_drand48_r since 5.20), a 48-bit LCG whose state starts as
// seed << 16 | 0x330E. flamegraph.pl's random_namehash() seeds with the
// 32-bit checksum unpack("%32W*", name), i.e. the code point sum mod 2^32.
double FirstDrawSeededBy(uint32_t seed) {
  constexpr uint64_t kMultiplier = 0x5DEECE66DULL;
  constexpr uint64_t kIncrement = 0xB;
  constexpr uint64_t kMask = (uint64_t{1} << 48) - 1;
  const uint64_t state = (uint64_t{seed} << 16) | 0x330E;
  const uint64_t next = (state * kMultiplier + kIncrement) & kMask;
  return std::ldexp(static_cast<double>(next), -48);
}

double NameSumDraw(const std::vector<char32_t>& chars) {
  uint32_t sum = 0;  // wraps mod 2^32 like Perl's %32 checksum
  for (char32_t c : chars) sum += static_cast<uint32_t>(c);
  return FirstDrawSeededBy(sum);
}

// flamegraph.pl's namehash(): a value in [0, 1] from the first three
// characters, early ones weighted more. A "module`function" name is hashed
// from the function part only, so one function gets one colour whatever
// module it is seen in.
double WeightedNameHash(const std::vector<char32_t>& chars) {
  size_t start = 0;
  for (size_t i = 1; i < chars.size(); ++i) {
    if (chars[i] == U'`') {
      start = i + 1;
      break;
    }
  }
  double vector = 0, weight = 1, max = 1;
  for (size_t i = start, modulus = 10; i < chars.size() && modulus <= 12; ++i, ++modulus) {
    const double digit = static_cast<double>(chars[i] % modulus);
    vector += digit / static_cast<double>(modulus - 1) * weight;
    max += weight;
    weight *= 0.70;
  }
  return 1 - vector / max;
}

// int() in Perl truncates; each channel is base + int(span * v), v in [0, 1].
uint8_t Channel(int base, int span, double v) {
  return static_cast<uint8_t>(base + static_cast<int>(span * v));
}

}  // namespace

absl::StatusOr<Palette> ParsePalette(absl::string_view name) {
  for (const PaletteEntry& entry : kPalettes) {
    if (entry.name == name) return entry.palette;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown palette \"", name,
      "\"; expected hot, mem, io, wakeup, chain, java, js, perl, dotnet, red, green, blue, "
      "aqua, yellow, purple or orange"));
}

absl::string_view PaletteName(Palette palette) {
  for (const PaletteEntry& entry : kPalettes) {
    if (entry.palette == palette) return entry.name;
  }
  return "hot";
}

void AppendRgb(Rgb color, std::string* out) {
  out->append("rgb(");
  AppendShortest(color.r, out);
  out->push_back(',');
  AppendShortest(color.g, out);
  out->push_back(',');
  AppendShortest(color.b, out);
  out->push_back(')');
}

ColorDraws NameDraws(bool by_hash, absl::string_view name) {
  const std::vector<char32_t> chars = CodePoints(name);
  ColorDraws draws;
  if (by_hash) {
    draws.v1 = WeightedNameHash(chars);
    const std::vector<char32_t> reversed(chars.rbegin(), chars.rend());
    draws.v2 = draws.v3 = WeightedNameHash(reversed);
  } else {
    // flamegraph.pl reseeds before each of v1, v2, v3, so all three are equal.
    draws.v1 = draws.v2 = draws.v3 = NameSumDraw(chars);
  }
  return draws;
}

Rgb PaletteColor(Palette palette, absl::string_view name, const ColorDraws& draws) {
  const double v1 = draws.v1, v2 = draws.v2, v3 = draws.v3;
  switch (ResolvePalette(palette, name)) {
    case Palette::kHot:
      return {Channel(205, 50, v3), Channel(0, 230, v1), Channel(0, 55, v2)};
    case Palette::kMem:
      return {0, Channel(190, 50, v2), Channel(0, 210, v1)};
    case Palette::kIo: {
      const uint8_t grey = Channel(80, 60, v1);
      return {grey, grey, Channel(190, 55, v2)};
    }
    case Palette::kRed: {
      const uint8_t other = Channel(50, 80, v1);
      return {Channel(200, 55, v1), other, other};
    }
    case Palette::kGreen: {
      const uint8_t other = Channel(50, 60, v1);
      return {other, Channel(200, 55, v1), other};
    }
    case Palette::kBlue: {
      const uint8_t other = Channel(80, 60, v1);
      return {other, other, Channel(205, 50, v1)};
    }
    case Palette::kAqua:
      return {Channel(50, 60, v1), Channel(165, 55, v1), Channel(165, 55, v1)};
    case Palette::kYellow: {
      const uint8_t red_green = Channel(175, 55, v1);
      return {red_green, red_green, Channel(50, 20, v1)};
    }
    case Palette::kPurple: {
      const uint8_t red_blue = Channel(190, 65, v1);
      return {red_blue, Channel(80, 60, v1), red_blue};
    }
    case Palette::kOrange:
      return {Channel(190, 65, v1), Channel(90, 65, v1), 0};
    default:
      // ResolvePalette always returns a single hue, hot, mem or io.
      return {};
  }
}

Rgb FrameColor(Palette palette, bool by_hash, absl::string_view name) {
  return PaletteColor(palette, name, NameDraws(by_hash, name));
}

Rgb DifferenceColor(int64_t delta, uint64_t max_delta, bool negate) {
  // flamegraph.pl: int(210 * (max - |delta|) / max) for the other two
  // channels. A frame can exceed the scale (the scale is the largest change
  // of one input line, a frame may sum several), so clamp at full colour.
  const double max = static_cast<double>(max_delta == 0 ? 1 : max_delta);
  double value = static_cast<double>(delta);
  if (negate) value = -value;
  const double magnitude = std::min(value < 0 ? -value : value, max);
  const uint8_t other = static_cast<uint8_t>(static_cast<int>(210 * (max - magnitude) / max));
  if (value > 0) return {255, other, other};
  if (value < 0) return {other, other, 255};
  return {255, 255, 255};
}

Background BackgroundFor(Palette palette) {
  switch (palette) {
    case Palette::kMem:
      return {"#eef2ee", "#e0ffe0"};  // green
    case Palette::kIo:
    case Palette::kWakeup:
    case Palette::kChain:
      return {"#eeeeee", "#e0e0ff"};  // blue
    case Palette::kHot:
    case Palette::kJava:
    case Palette::kJs:
    case Palette::kPerl:
    case Palette::kDotnet:
      return {"#eeeeee", "#eeeeb0"};  // yellow
    default:
      return {"#f8f8f8", "#e8e8e8"};  // grey, for the single-hue palettes
  }
}

absl::StatusOr<Background> ParseBackground(absl::string_view name) {
  if (name == "yellow") return Background{"#eeeeee", "#eeeeb0"};
  if (name == "blue") return Background{"#eeeeee", "#e0e0ff"};
  if (name == "green") return Background{"#eef2ee", "#e0ffe0"};
  if (name == "grey") return Background{"#f8f8f8", "#e8e8e8"};
  bool hex = name.size() == 7 && name[0] == '#';
  for (size_t i = 1; hex && i < name.size(); ++i) hex = absl::ascii_isxdigit(name[i]);
  if (hex) return Background{std::string(name), std::string(name)};
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown background colours \"", name, "\"; expected yellow, blue, green, grey or #rrggbb"));
}

}  // namespace profcpu::render
