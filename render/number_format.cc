#include "render/number_format.h"

#include <charconv>
#include <cstdlib>

namespace profcpu::render {

void AppendWithThousands(uint64_t value, std::string* out) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  (void)ec;  // 24 bytes hold any uint64_t.
  const int length = static_cast<int>(end - digits);
  for (int i = 0; i < length; ++i) {
    // A comma goes before every digit that starts a group of three from the right.
    if (i > 0 && (length - i) % 3 == 0) out->push_back(',');
    out->push_back(digits[i]);
  }
}

double AppendRoundedWithThousands(double value, std::string* out) {
  std::string digits;
  AppendFixed(value, 0, &digits);
  size_t first = digits.empty() || digits[0] != '-' ? 0 : 1;
  out->append(digits, 0, first);
  const size_t length = digits.size() - first;
  for (size_t i = 0; i < length; ++i) {
    if (i > 0 && (length - i) % 3 == 0) out->push_back(',');
    out->push_back(digits[first + i]);
  }
  double rounded = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), rounded);
  return rounded;
}

void AppendFixed(double value, int decimals, std::string* out) {
  // Large enough for any double in fixed notation with up to 20 decimals.
  char buffer[352];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value,
                                 std::chars_format::fixed, decimals);
  if (ec != std::errc()) {
    out->append("0");
    return;
  }
  out->append(buffer, end);
}

void AppendShortest(double value, std::string* out) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) {
    out->append("0");
    return;
  }
  out->append(buffer, end);
}

void AppendHundredths(int64_t hundredths, std::string* out) {
  // Negating in uint64_t keeps INT64_MIN defined.
  uint64_t magnitude = static_cast<uint64_t>(hundredths);
  if (hundredths < 0) {
    out->push_back('-');
    magnitude = 0 - magnitude;
  }
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), magnitude / 100);
  (void)ec;
  out->append(buffer, end);
  const unsigned fraction = static_cast<unsigned>(magnitude % 100);
  out->push_back('.');
  out->push_back(static_cast<char>('0' + fraction / 10));
  out->push_back(static_cast<char>('0' + fraction % 10));
}

}  // namespace profcpu::render
