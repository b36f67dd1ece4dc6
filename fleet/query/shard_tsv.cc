#include "fleet/query/shard_tsv.h"

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace profcpu::fleet {
namespace {

absl::StatusOr<std::string> Unescape(absl::string_view field, size_t row) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\') {
      out.push_back(field[i]);
      continue;
    }
    if (++i == field.size()) {
      return absl::DataLossError(absl::StrCat("row ", row, ": a field ends in a lone backslash"));
    }
    switch (field[i]) {
      case 't': out.push_back('\t'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case '0': out.push_back('\0'); break;
      case '\\': out.push_back('\\'); break;
      case '\'': out.push_back('\''); break;
      default:
        return absl::DataLossError(
            absl::StrCat("row ", row, ": unknown escape \\", absl::CEscape(field.substr(i, 1))));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<TsvRow>> ParseShardTsv(absl::string_view answer, size_t fields,
                                                  size_t max_rows) {
  std::vector<TsvRow> rows;
  if (answer.empty()) return rows;
  if (answer.back() != '\n') {
    return absl::DataLossError("the answer does not end with a newline (cut short?)");
  }
  answer.remove_suffix(1);
  size_t row_number = 0;
  for (absl::string_view line : absl::StrSplit(answer, '\n')) {
    ++row_number;
    if (rows.size() == max_rows) {
      return absl::ResourceExhaustedError(absl::StrCat("more than ", max_rows, " rows"));
    }
    TsvRow row;
    row.reserve(fields);
    for (absl::string_view field : absl::StrSplit(line, '\t')) {
      if (row.size() == fields) {
        return absl::DataLossError(
            absl::StrCat("row ", row_number, ": more than ", fields, " fields"));
      }
      absl::StatusOr<std::string> text = Unescape(field, row_number);
      if (!text.ok()) return text.status();
      row.push_back(*std::move(text));
    }
    if (row.size() != fields) {
      return absl::DataLossError(absl::StrCat("row ", row_number, ": ", row.size(),
                                              " fields, expected ", fields));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<uint64_t> ParseUInt64Field(absl::string_view field, absl::string_view column) {
  uint64_t value = 0;
  if (field.empty() || field.size() > 20 || field[0] == '-' || field[0] == '+' ||
      !absl::SimpleAtoi(field, &value)) {
    return absl::DataLossError(absl::StrCat(column, " \"", absl::CHexEscape(field.substr(0, 40)),
                                            "\" is not a UInt64"));
  }
  return value;
}

absl::StatusOr<std::vector<uint64_t>> ParseUInt64Array(absl::string_view field,
                                                       size_t max_items) {
  if (field.size() < 2 || field.front() != '[' || field.back() != ']') {
    return absl::DataLossError("frame_ids is not an array [..]");
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
