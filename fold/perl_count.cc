#include "fold/perl_count.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"

namespace profcpu::fold {

void PerlCount::AddDigits(absl::string_view digits) {
  uint64_t value = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (char c : digits) {
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (kMax - digit) / 10) {
      // Beyond 2^64-1 Perl converts the string with strtod.
      std::string text(digits);
      AddDouble(std::strtod(text.c_str(), nullptr));
      return;
    }
    value = value * 10 + digit;
  }
  Add(value);
}

void PerlCount::Add(uint64_t value) {
  if (is_double_) {
    double_ += static_cast<double>(value);
  } else if (integer_ + value < integer_) {
    is_double_ = true;
    double_ = static_cast<double>(integer_) + static_cast<double>(value);
  } else {
    integer_ += value;
  }
}

void PerlCount::AddDouble(double value) {
  if (!is_double_) {
    is_double_ = true;
    double_ = static_cast<double>(integer_);
  }
  double_ += value;
}

void PerlCount::AppendTo(std::string* out) const {
  if (!is_double_) {
    absl::StrAppend(out, integer_);
  } else if (std::isinf(double_)) {
    out->append("Inf");
  } else {
    char buffer[32];
    int n = std::snprintf(buffer, sizeof(buffer), "%.15g", double_);
    out->append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace profcpu::fold
