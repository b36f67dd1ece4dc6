// Number formatting for the SVG writer. The flame graph prints several numbers
// per frame, so these append straight into the output buffer without going
// through printf's locale machinery.
#ifndef PROFCPU_RENDER_NUMBER_FORMAT_H_
#define PROFCPU_RENDER_NUMBER_FORMAT_H_

#include <cstdint>
#include <string>

namespace profcpu::render {

// Appends `value` in decimal with a comma every three digits ("1,234,567"),
// as flamegraph.pl prints counts (perlfaq5's commify).
void AppendWithThousands(uint64_t value, std::string* out);

// Appends `value` rounded to an integer (printf's "%.0f") with commas, as
// flamegraph.pl prints scaled counts, and returns the rounded value.
double AppendRoundedWithThousands(double value, std::string* out);

// Appends `value` with exactly `decimals` digits after the point, rounded as
// printf("%.*f") rounds, so percentages match flamegraph.pl's sprintf.
void AppendFixed(double value, int decimals, std::string* out);

// Appends the shortest decimal text that reads back as `value` ("69", "79.5"),
// which is how Perl interpolates the coordinates flamegraph.pl computes.
void AppendShortest(double value, std::string* out);

// Appends a count of hundredths as a decimal with two places: 12345 -> "123.45",
// -5 -> "-0.05". Frame coordinates are kept as integer hundredths of a pixel so
// that a child's rounded edges never fall outside its parent's.
void AppendHundredths(int64_t hundredths, std::string* out);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_NUMBER_FORMAT_H_
