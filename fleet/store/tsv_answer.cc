#include "fleet/store/tsv_answer.h"

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace profcpu::fleet {
namespace {

// A part of hostile text fit for an error message: at most 40 bytes, escaped.
std::string Quote(absl::string_view text) {
  constexpr size_t kMax = 40;
  std::string quoted = absl::CHexEscape(text.substr(0, kMax));
  if (text.size() > kMax) quoted += "...";
  return absl::StrCat("'", quoted, "'");
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

absl::StatusOr<std::vector<TsvRow>> ParseTsvAnswer(std::string_view answer_view,
                                                   const TsvLimits& limits) {
  const absl::string_view answer(answer_view.data(), answer_view.size());
  std::vector<TsvRow> rows;
  size_t cells = 0;
  size_t pos = 0;
  while (pos < answer.size()) {
    const size_t row_number = rows.size() + 1;
    auto error = [row_number](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("row ", row_number, ": ", what));
    };
    if (rows.size() >= limits.max_rows) {
      return absl::ResourceExhaustedError(
          absl::StrCat("answer has more than ", limits.max_rows, " rows"));
    }
    TsvRow row;
    std::string field;
    bool row_done = false;
    while (!row_done) {
      if (pos >= answer.size()) return error("answer ends without a newline");
      const char c = answer[pos++];
      char out;
      if (c == '\t' || c == '\n') {
        if (row.size() >= limits.max_fields) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "row ", row_number, ": more than ", limits.max_fields, " fields"));
        }
        if (++cells > limits.max_cells) {
          return absl::ResourceExhaustedError(
              absl::StrCat("answer has more than ", limits.max_cells, " fields in all"));
        }
        row.push_back(std::move(field));
        field.clear();
        row_done = c == '\n';
        continue;
      }
      if (c != '\\') {
        out = c;
      } else {
        if (pos >= answer.size()) return error("answer ends inside an escape");
        const char e = answer[pos++];
        switch (e) {
          case 't': out = '\t'; break;
          case 'n': out = '\n'; break;
          case 'r': out = '\r'; break;
          case 'b': out = '\b'; break;
          case 'f': out = '\f'; break;
          case 'a': out = '\a'; break;
          case 'v': out = '\v'; break;
          case '0': out = '\0'; break;
          case 'x': {
            const int hi = pos < answer.size() ? HexValue(answer[pos]) : -1;
            const int lo = pos + 1 < answer.size() ? HexValue(answer[pos + 1]) : -1;
            if (hi < 0 || lo < 0) {
              return error(absl::StrCat("bad escape ", Quote(answer.substr(pos - 2, 4))));
            }
            out = static_cast<char>(hi * 16 + lo);
            pos += 2;
            break;
          }
          case '\t':
          case '\n':
            // A backslash before a real separator: ClickHouse never writes
            // it; a field cannot end in half an escape.
            return error("backslash before a separator");
          default:
            // \\ \' \" \/ and any other: the character itself, as
            // ClickHouse reads them.
            out = e;
            break;
        }
      }
      if (field.size() >= limits.max_field_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "row ", row_number, ": field ", row.size() + 1, " longer than ",
            limits.max_field_bytes, " bytes"));
      }
      field.push_back(out);
    }
    const size_t expected = limits.fields != 0 ? limits.fields
                            : rows.empty()     ? row.size()
                                               : rows.front().size();
    if (row.size() != expected) {
      return error(absl::StrCat(row.size(), " fields, expected ", expected));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<uint64_t> ParseUInt64Field(std::string_view field_view) {
  const absl::string_view field(field_view.data(), field_view.size());
  uint64_t value = 0;
  bool digits_only = !field.empty() && field.size() <= 20;
  for (char c : field) digits_only = digits_only && c >= '0' && c <= '9';
  if (!digits_only || !absl::SimpleAtoi(field, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected an unsigned integer, got ", Quote(field)));
  }
  return value;
}

}  // namespace profcpu::fleet
