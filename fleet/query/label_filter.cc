#include "fleet/query/label_filter.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "fleet/store/schema.h"

namespace profcpu::fleet {
namespace {

constexpr size_t kMaxFilterBytes = 64 * 1024;

absl::string_view OpText(LabelMatcher::Op op) {
  switch (op) {
    case LabelMatcher::Op::kEqual: return "=";
    case LabelMatcher::Op::kNotEqual: return "!=";
    case LabelMatcher::Op::kMatches: return "=~";
    case LabelMatcher::Op::kNotMatches: return "!~";
  }
  return "=";
}

// The length of "key op" at the start of `text` if it starts a matcher
// (a label key, then an operator), else 0.
size_t MatcherHead(absl::string_view text, LabelMatcher* matcher) {
  size_t key_end = 0;
  while (key_end < text.size() && (std::isalnum(static_cast<unsigned char>(text[key_end])) ||
                                   text[key_end] == '_')) {
    ++key_end;
  }
  absl::string_view key = text.substr(0, key_end);
  if (!IsLabelKey(key)) return 0;
  absl::string_view rest = text.substr(key_end);
  LabelMatcher::Op op;
  size_t op_size = 2;
  if (absl::StartsWith(rest, "=~")) {
    op = LabelMatcher::Op::kMatches;
  } else if (absl::StartsWith(rest, "!~")) {
    op = LabelMatcher::Op::kNotMatches;
  } else if (absl::StartsWith(rest, "!=")) {
    op = LabelMatcher::Op::kNotEqual;
  } else if (absl::StartsWith(rest, "=")) {
    op = LabelMatcher::Op::kEqual;
    op_size = 1;
  } else {
    return 0;
  }
  matcher->key = std::string(key);
  matcher->op = op;
  return key_end + op_size;
}

}  // namespace

bool IsLabelKey(absl::string_view key) {
  return std::any_of(kLabelKeys.begin(), kLabelKeys.end(),
                     [key](const char* label) { return key == label; });
}

std::string SqlStringLiteral(absl::string_view value) {
  std::string out = "'";
  out.reserve(value.size() + 2);
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\0': out += "\\0"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[5];
          std::snprintf(escaped, sizeof(escaped), "\\x%02X", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('\'');
  return out;
}

absl::StatusOr<LabelFilter> ParseLabelFilter(absl::string_view text) {
  LabelFilter filter;
  if (text.size() > kMaxFilterBytes) {
    return absl::InvalidArgumentError("-where: longer than 64 KiB");
  }
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return filter;
  LabelMatcher matcher;
  size_t head = MatcherHead(text, &matcher);
  if (head == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-where \"", text, "\": expected KEY=VALUE, KEY!=VALUE, KEY=~REGEX or KEY!~REGEX with KEY one of ",
        absl::StrJoin(kLabelKeys, " ")));
  }
  size_t value_start = head;
  for (size_t i = head; i <= text.size(); ++i) {
    LabelMatcher next;
    size_t next_head = 0;
    if (i < text.size()) {
      if (text[i] != ',') continue;
      next_head = MatcherHead(text.substr(i + 1), &next);
      if (next_head == 0) continue;  // a comma inside the value
    }
    matcher.value = std::string(text.substr(value_start, i - value_start));
    filter.matchers.push_back(std::move(matcher));
    if (i == text.size()) break;
    matcher = std::move(next);
    value_start = i + 1 + next_head;
    i = value_start - 1;
  }
  return filter;
}

std::string LabelFilter::Sql() const {
  if (matchers.empty()) return "1";
  std::vector<std::string> terms;
  for (const LabelMatcher& m : matchers) {
    switch (m.op) {
      case LabelMatcher::Op::kEqual:
        terms.push_back(absl::StrCat(m.key, " = ", SqlStringLiteral(m.value)));
        break;
      case LabelMatcher::Op::kNotEqual:
        terms.push_back(absl::StrCat(m.key, " != ", SqlStringLiteral(m.value)));
        break;
      case LabelMatcher::Op::kMatches:
        terms.push_back(absl::StrCat("match(", m.key, ", ",
                                     SqlStringLiteral(absl::StrCat("^(?:", m.value, ")$")), ")"));
        break;
      case LabelMatcher::Op::kNotMatches:
        terms.push_back(absl::StrCat("NOT match(", m.key, ", ",
                                     SqlStringLiteral(absl::StrCat("^(?:", m.value, ")$")), ")"));
        break;
    }
  }
  return absl::StrJoin(terms, " AND ");
}

std::string LabelFilter::Text() const {
  std::vector<std::string> parts;
  for (const LabelMatcher& m : matchers) parts.push_back(absl::StrCat(m.key, OpText(m.op), m.value));
  return absl::StrJoin(parts, ",");
}

}  // namespace profcpu::fleet
