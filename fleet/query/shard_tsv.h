// A shard's TabSeparated answer as rows of unescaped fields, read as hostile
// input: a fixed number of fields per row, bounded rows, one-line errors
// naming the row. Stands in for the store's bounded reader
// (fleet/store/tsv_answer.h) until it lands; same escapes (\t \n \\ \0 \'
// \b \f \r), same contract.
#ifndef PROFCPU_FLEET_QUERY_SHARD_TSV_H_
#define PROFCPU_FLEET_QUERY_SHARD_TSV_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::fleet {

inline constexpr size_t kMaxAnswerRows = 4'000'000;

using TsvRow = std::vector<std::string>;

absl::StatusOr<std::vector<TsvRow>> ParseShardTsv(absl::string_view answer, size_t fields,
                                                  size_t max_rows = kMaxAnswerRows);

// "123" as a UInt64 (decimal, no sign), with the column named in the error.
absl::StatusOr<uint64_t> ParseUInt64Field(absl::string_view field, absl::string_view column);

// "[1,2,3]" (ClickHouse's Array(UInt64) text), at most `max_items`.
absl::StatusOr<std::vector<uint64_t>> ParseUInt64Array(absl::string_view field,
                                                       size_t max_items);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_SHARD_TSV_H_
