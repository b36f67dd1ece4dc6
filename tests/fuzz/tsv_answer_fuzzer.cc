// A ClickHouse TabSeparated answer (fleet/store/tsv_answer.h): whatever
// answers at a store's address may send anything. Parsing must be total and
// bounded, every row as wide as the first, and what it read must read back
// the same once written out again in ClickHouse's escaping.
#include <string>

#include "absl/strings/numbers.h"
#include "fleet/store/tsv_answer.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;

namespace {

std::string Escape(const std::vector<profcpu::fleet::TsvRow>& rows) {
  std::string out;
  for (const profcpu::fleet::TsvRow& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) out.push_back('\t');
      for (char c : row[i]) {
        switch (c) {
          case '\t': out += "\\t"; break;
          case '\n': out += "\\n"; break;
          case '\\': out += "\\\\"; break;
          case '\0': out += "\\0"; break;
          default: out.push_back(c);
        }
      }
    }
    out.push_back('\n');
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text = profcpu::fuzz::AsText(data, size);
  const std::string_view answer(text.data(), text.size());
  profcpu::fleet::TsvLimits small;
  small.max_rows = 50;
  small.max_fields = 8;
  small.max_field_bytes = 64;
  small.max_cells = 200;
  for (const profcpu::fleet::TsvLimits& limits : {profcpu::fleet::TsvLimits{}, small}) {
    auto rows = profcpu::fleet::ParseTsvAnswer(answer, limits);
    if (!rows.ok()) {
      Check(!rows.status().message().empty(), "an error without a message");
      Check(rows.status().message().size() < 200, "an error message that quotes too much");
      continue;
    }
    Check(rows->size() <= limits.max_rows, "more rows than the limit");
    size_t cells = 0;
    for (const profcpu::fleet::TsvRow& row : *rows) {
      Check(row.size() == rows->front().size(), "rows of different widths");
      Check(row.size() <= limits.max_fields, "more fields than the limit");
      cells += row.size();
      for (const std::string& field : row) {
        Check(field.size() <= limits.max_field_bytes, "a field over the limit");
      }
    }
    Check(cells <= limits.max_cells, "more fields in all than the limit");
    auto again = profcpu::fleet::ParseTsvAnswer(Escape(*rows), limits);
    Check(again.ok() && *again == *rows, "rows do not read back after escaping");
    if (!rows->empty() && !rows->front().empty()) {
      const std::string& field = rows->front().front();
      auto number = profcpu::fleet::ParseUInt64Field(field);
      uint64_t expected = 0;
      if (number.ok()) {
        Check(absl::SimpleAtoi(field, &expected) && expected == *number,
              "an integer field read differently");
      }
    }
  }
  return 0;
}
