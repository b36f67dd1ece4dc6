// ClickHouse's TabSeparated answers, read as hostile input: a store (or
// whatever answers at its address) may send anything. Rows end with '\n',
// fields are separated by '\t', and a field's tab, newline and backslash
// come escaped (\t \n \\, also \b \f \r \0 \' \a \v and \xHH). Every bound is
// checked before memory is spent, and an answer that breaks one, or the
// format, is an error that says where. NULL (\N) reads as "N": the store's
// columns are not Nullable; select ifNull(x, ...) where a NULL may come.
#ifndef PROFCPU_FLEET_STORE_TSV_ANSWER_H_
#define PROFCPU_FLEET_STORE_TSV_ANSWER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace profcpu::fleet {

struct TsvLimits {
  size_t max_rows = 1'000'000;
  size_t max_fields = 64;              // per row
  size_t max_field_bytes = 1u << 20;   // one field, unescaped
  size_t max_cells = 4'000'000;        // rows x fields: each costs a string
  // Every row must have this many fields (0: any, but all rows alike).
  size_t fields = 0;
};

using TsvRow = std::vector<std::string>;

// The rows of `answer`. An empty answer is no rows. Errors (InvalidArgument,
// or ResourceExhausted for a bound) name the row: "row 3: 2 fields, expected
// 4", "row 1: answer ends without a newline", "row 9: bad escape \\x4".
absl::StatusOr<std::vector<TsvRow>> ParseTsvAnswer(std::string_view answer,
                                                   const TsvLimits& limits = {});

// A field holding an unsigned decimal integer ("count()"), no sign, no
// spaces, in range; an error quotes (a capped part of) the field.
absl::StatusOr<uint64_t> ParseUInt64Field(std::string_view field);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_STORE_TSV_ANSWER_H_
