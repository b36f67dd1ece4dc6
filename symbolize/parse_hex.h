// Strict hexadecimal parsing for the symbol text formats (kallsyms, perf
// maps). Unlike absl::SimpleHexAtoi it accepts no sign and no whitespace, so
// "-1" or " 10" in a hostile file is a malformed line, not a number.
#ifndef PROFCPU_SYMBOLIZE_PARSE_HEX_H_
#define PROFCPU_SYMBOLIZE_PARSE_HEX_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace profcpu::symbolize {

// Parses `text` as hex digits with an optional "0x"/"0X" prefix. False on an
// empty digit string, any other character, or a value above 2^64-1.
inline bool ParseHex(absl::string_view text, uint64_t* out) {
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  if (text.empty()) return false;
  uint64_t value = 0;
  for (char c : text) {
    uint64_t digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<uint64_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<uint64_t>(c - 'A' + 10);
    } else {
      return false;
    }
    if (value > (UINT64_MAX >> 4)) return false;  // would overflow
    value = (value << 4) | digit;
  }
  *out = value;
  return true;
}

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_PARSE_HEX_H_
