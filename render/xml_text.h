// Making untrusted text safe to place in the SVG. Frame names come from the
// profiled program (symbol tables, perf maps, JIT dumps) and are attacker-
// controlled: whatever bytes they hold, the output must stay well-formed XML
// and no name may open an element, an entity or a script.
#ifndef PROFCPU_RENDER_XML_TEXT_H_
#define PROFCPU_RENDER_XML_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace profcpu::render {

// True when `text` is valid UTF-8 and every character in it may appear in a
// frame label unchanged (see AppendCleanUtf8). Most names are, so callers can
// skip a copy.
bool IsCleanText(absl::string_view text);

// Appends `text` with every ill-formed UTF-8 sequence (each maximal subpart, as
// Unicode 15 section 3.9 and browsers count them) and every character that a
// label must not hold replaced by U+FFFD. Replaced characters: those XML 1.0
// forbids (C0 controls, U+FFFE, U+FFFF; XML 1.0 section 2.2 "Char"), and also
// tab, newline, carriage return, DEL and the C1 controls, which XML allows but
// which would only render as invisible or layout-breaking characters in a label.
void AppendCleanText(absl::string_view text, std::string* out);

// Appends clean text (see above) with & < > " ' written as references, so it is
// safe both as element content and inside a double- or single-quoted attribute.
void AppendXmlEscaped(absl::string_view clean_text, std::string* out);

// AppendCleanText then AppendXmlEscaped, for text of unknown origin.
void AppendXmlText(absl::string_view text, std::string* out);

// Appends text for use inside <!-- -->: comments cannot hold "--" (XML 1.0
// section 2.5) and references are not expanded there, so the text is cleaned
// and a space is put between two consecutive hyphens instead of escaping.
// '<' and '>' are written as "&lt;" and "&gt;" (shown literally): not needed
// for XML, but no tag-like text survives even if the SVG is pasted into HTML.
void AppendXmlCommentText(absl::string_view text, std::string* out);

// Number of code points in clean (valid UTF-8) text.
size_t CountCodePoints(absl::string_view clean_text);

// The first `count` code points of clean text (all of it if it has fewer).
absl::string_view PrefixCodePoints(absl::string_view clean_text, size_t count);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_XML_TEXT_H_
