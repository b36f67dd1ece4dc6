// `-where 'namespace=shop,pod=~api-.*'`: which samples a query keeps, by the
// label keys of the store (docs/fleet.md), as a ClickHouse SQL condition.
//
// Matchers are `key=value`, `key!=value`, `key=~regex`, `key!~regex`, joined
// by commas and all required. A comma separates matchers only where a label
// key and an operator follow it, so regexes keep their commas (`x{1,3}`).
// Regexes are RE2 (ClickHouse's match()) and anchored at both ends, as
// Prometheus label matchers are: `pod=~api-.*` keeps api-1, not my-api-1.
// Values reach the SQL only as escaped string literals (SqlStringLiteral).
#ifndef PROFCPU_FLEET_QUERY_LABEL_FILTER_H_
#define PROFCPU_FLEET_QUERY_LABEL_FILTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::fleet {

// One of the store's label columns (fleet/store/schema.h kLabelKeys).
bool IsLabelKey(absl::string_view key);

struct LabelMatcher {
  enum class Op { kEqual, kNotEqual, kMatches, kNotMatches };
  std::string key;  // one of kQueryLabelKeys
  Op op = Op::kEqual;
  std::string value;  // the text or the regex, as the user wrote it
};

struct LabelFilter {
  std::vector<LabelMatcher> matchers;

  // "namespace = 'shop' AND match(pod, '^(?:api-.*)$')"; "1" without matchers.
  std::string Sql() const;
  // The matchers as the user would write them again, for titles.
  std::string Text() const;
};

// Parses -where's text ("" keeps everything).
absl::StatusOr<LabelFilter> ParseLabelFilter(absl::string_view text);

// A ClickHouse single-quoted string literal holding exactly `value`'s bytes:
// backslash and quote escaped, control bytes as escapes, so no value can end
// the literal or the statement.
std::string SqlStringLiteral(absl::string_view value);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_LABEL_FILTER_H_
