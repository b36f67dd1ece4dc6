#include "render/xml_text.h"

#include <cstdint>

namespace profcpu::render {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD, UTF-8

// Printable ASCII passes through every function here untouched.
bool IsPlainAscii(unsigned char c) { return c >= 0x20 && c < 0x7F; }

// Decodes one UTF-8 sequence at the start of `text` (non-empty). Returns its
// length and sets *code_point, or returns the negated length of the maximal
// ill-formed subpart (at least 1 byte) to replace with one U+FFFD. The
// well-formed byte ranges are Unicode 15 Table 3-7.
int DecodeOne(absl::string_view text, char32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  }
  int length;
  unsigned char low = 0x80, high = 0xBF;  // range of the second byte
  char32_t value;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    value = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    value = lead & 0x07;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;  // continuation byte or C0, C1, F5..FF: never a lead byte
  }
  for (int i = 1; i < length; ++i) {
    if (static_cast<size_t>(i) >= text.size()) return -i;
    const unsigned char c = byte(i);
    const unsigned char lo = i == 1 ? low : 0x80;
    const unsigned char hi = i == 1 ? high : 0xBF;
    if (c < lo || c > hi) return -i;
    value = (value << 6) | (c & 0x3F);
  }
  *code_point = value;
  return length;
}

bool IsLabelCharacter(char32_t c) {
  if (c < 0x20) return false;                // C0 controls, tab, LF, CR
  if (c >= 0x7F && c <= 0x9F) return false;  // DEL and C1 controls
  if (c == 0xFFFE || c == 0xFFFF) return false;
  return true;
}

}  // namespace

bool IsCleanText(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (IsPlainAscii(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    char32_t c;
    const int length = DecodeOne(text.substr(i), &c);
    if (length < 0 || !IsLabelCharacter(c)) return false;
    i += static_cast<size_t>(length);
  }
  return true;
}

void AppendCleanText(absl::string_view text, std::string* out) {
  size_t i = 0;
  while (i < text.size()) {
    // Copy runs of printable ASCII in one append.
    size_t run = i;
    while (run < text.size() && IsPlainAscii(static_cast<unsigned char>(text[run]))) ++run;
    out->append(text.data() + i, run - i);
    i = run;
    if (i == text.size()) break;
    char32_t c;
    const int length = DecodeOne(text.substr(i), &c);
    if (length < 0) {
      out->append(kReplacement);
      i += static_cast<size_t>(-length);
    } else {
      if (IsLabelCharacter(c)) {
        out->append(text.data() + i, static_cast<size_t>(length));
      } else {
        out->append(kReplacement);
      }
      i += static_cast<size_t>(length);
    }
  }
}

void AppendXmlEscaped(absl::string_view clean_text, std::string* out) {
  size_t start = 0;
  for (size_t i = 0; i < clean_text.size(); ++i) {
    absl::string_view reference;
    switch (clean_text[i]) {
      case '&': reference = "&amp;"; break;
      case '<': reference = "&lt;"; break;
      // '>' too: "]]>" may not appear in content (XML 1.0 section 2.4).
      case '>': reference = "&gt;"; break;
      case '"': reference = "&quot;"; break;
      case '\'': reference = "&#39;"; break;
      default: continue;
    }
    out->append(clean_text.data() + start, i - start);
    out->append(reference.data(), reference.size());
    start = i + 1;
  }
  out->append(clean_text.data() + start, clean_text.size() - start);
}

void AppendXmlText(absl::string_view text, std::string* out) {
  if (IsCleanText(text)) {
    AppendXmlEscaped(text, out);
    return;
  }
  std::string clean;
  AppendCleanText(text, &clean);
  AppendXmlEscaped(clean, out);
}

void AppendXmlCommentText(absl::string_view text, std::string* out) {
  std::string clean;
  AppendCleanText(text, &clean);
  char previous = '\0';
  for (char c : clean) {
    if (c == '-' && previous == '-') out->push_back(' ');
    if (c == '<') {
      out->append("&lt;");
    } else if (c == '>') {
      out->append("&gt;");
    } else {
      out->push_back(c);
    }
    previous = c;
  }
}

size_t CountCodePoints(absl::string_view clean_text) {
  size_t count = 0;
  for (char c : clean_text) {
    // Every byte but a continuation byte (10xxxxxx) starts a code point.
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++count;
  }
  return count;
}

absl::string_view PrefixCodePoints(absl::string_view clean_text, size_t count) {
  size_t seen = 0;
  for (size_t i = 0; i < clean_text.size(); ++i) {
    if ((static_cast<unsigned char>(clean_text[i]) & 0xC0) != 0x80) {
      if (seen == count) return clean_text.substr(0, i);
      ++seen;
    }
  }
  return clean_text;
}

}  // namespace profcpu::render
