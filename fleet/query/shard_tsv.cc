#include "fleet/query/shard_tsv.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace profcpu::fleet {

absl::StatusOr<std::vector<TsvRow>> ParseShardTsv(absl::string_view answer, size_t fields,
                                                  size_t max_rows) {
  TsvLimits limits;
  limits.fields = fields;
  limits.max_fields = fields;
  limits.max_rows = max_rows;
  limits.max_cells = std::max(limits.max_cells, max_rows * fields);
  return ParseTsvAnswer(std::string_view(answer.data(), answer.size()), limits);
}

absl::StatusOr<uint64_t> ParseUInt64Field(absl::string_view field, absl::string_view column) {
  absl::StatusOr<uint64_t> value = ParseUInt64Field(std::string_view(field.data(), field.size()));
  if (!value.ok()) {
    return absl::Status(value.status().code(), absl::StrCat(column, ": ", value.status().message()));
  }
  return value;
}

absl::StatusOr<std::vector<uint64_t>> ParseUInt64Array(absl::string_view field,
                                                       size_t max_items) {
  if (field.size() < 2 || field.front() != '[' || field.back() != ']') {
    return absl::InvalidArgumentError("not an array [..]");
  }
  std::vector<uint64_t> items;
  field = field.substr(1, field.size() - 2);
  if (field.empty()) return items;
  for (absl::string_view item : absl::StrSplit(field, ',')) {
    if (items.size() == max_items) {
      return absl::ResourceExhaustedError(absl::StrCat("an array of more than ", max_items));
    }
    absl::StatusOr<uint64_t> value = ParseUInt64Field(item, "an array item");
    if (!value.ok()) return value.status();
    items.push_back(*value);
  }
  return items;
}

}  // namespace profcpu::fleet
