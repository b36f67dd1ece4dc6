// A shard's TabSeparated answer, read with the store's bounded reader
// (fleet/store/tsv_answer.h): a fixed number of fields per row, at most so
// many rows. Plus the field parsers the query's answers need.
#ifndef PROFCPU_FLEET_QUERY_SHARD_TSV_H_
#define PROFCPU_FLEET_QUERY_SHARD_TSV_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fleet/store/tsv_answer.h"

namespace profcpu::fleet {

inline constexpr size_t kMaxAnswerRows = 4'000'000;

absl::StatusOr<std::vector<TsvRow>> ParseShardTsv(absl::string_view answer, size_t fields,
                                                  size_t max_rows = kMaxAnswerRows);

// A UInt64 field, with its column named in the error.
absl::StatusOr<uint64_t> ParseUInt64Field(absl::string_view field, absl::string_view column);

// "[1,2,3]" (ClickHouse's Array(UInt64) text), at most `max_items`.
absl::StatusOr<std::vector<uint64_t>> ParseUInt64Array(absl::string_view field,
                                                       size_t max_items);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_SHARD_TSV_H_
