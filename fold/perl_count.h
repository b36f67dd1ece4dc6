// A stack count summed and printed as stackcollapse-perf.pl's Perl does it,
// so even absurd periods from hostile text print byte-identically: Perl keeps
// an unsigned 64-bit integer while the sum fits and switches to a double for
// good once it does not (or once one period alone exceeds 2^64-1), printing
// doubles with "%.15g" ("1.84467440737096e+19").
#ifndef PROFCPU_FOLD_PERL_COUNT_H_
#define PROFCPU_FOLD_PERL_COUNT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace profcpu::fold {

class PerlCount {
 public:
  // Adds a decimal digit string (as the script's (\d+) captures).
  void AddDigits(absl::string_view digits);
  void Add(uint64_t value);
  // Appends the count as Perl's print would.
  void AppendTo(std::string* out) const;

  bool is_double() const { return is_double_; }
  uint64_t integer() const { return integer_; }

 private:
  void AddDouble(double value);

  uint64_t integer_ = 0;
  double double_ = 0;
  bool is_double_ = false;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PERL_COUNT_H_
