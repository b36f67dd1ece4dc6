#include "fold/perf_script_format.h"

#include <cinttypes>
#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fold/frame_name.h"
#include "symbolize/dotnet_assembly.h"

namespace profcpu::fold {
namespace {

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence (RFC 3629) starting at `s[0]`, or
// 0 if there is none.
size_t Utf8SequenceLength(absl::string_view s) {
  auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char lead = byte(0);
  size_t length;
  unsigned char second_min = 0x80, second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // no overlong forms
    if (lead == 0xED) second_max = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < second_min || byte(1) > second_max) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (!IsContinuation(byte(i))) return 0;
  }
  return length;
}

void AppendHex(uint64_t value, std::string* out) {
  char buffer[24];
  int n = std::snprintf(buffer, sizeof(buffer), "%16" PRIx64, value);
  out->append(buffer, static_cast<size_t>(n));
}

void AppendOffset(uint64_t offset, std::string* out) {
  char buffer[24];
  int n = std::snprintf(buffer, sizeof(buffer), "+0x%" PRIx64, offset);
  out->append(buffer, static_cast<size_t>(n));
}

// A word of the name that is "[X]", as PerfView looks for one in names of
// perf-map frames (GetSymbolFromMicrosoftMap: words split at ' ').
bool HasBracketedWord(absl::string_view name) {
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find(' ', start);
    if (end == absl::string_view::npos) end = name.size();
    if (end - start >= 2 && name[start] == '[' && name[end - 1] == ']') return true;
    start = end + 1;
  }
  return false;
}

// "[perf-PID.map] " for a perf-map frame PerfView would otherwise misread
// (FrameDialect::kPerfView).
void AppendPerfViewModuleWord(absl::string_view module, absl::string_view name,
                              std::string* out) {
  if (!absl::EndsWith(module, ".map") || HasBracketedWord(name)) return;
  const size_t slash = module.rfind('/');
  out->push_back('[');
  const absl::string_view base = module.substr(slash == absl::string_view::npos ? 0 : slash + 1);
  out->append(base.data(), base.size());
  out->append("] ");
}

}  // namespace

void AppendSanitized(absl::string_view text, std::string* out) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      size_t run = i + 1;
      while (run < text.size() && static_cast<unsigned char>(text[run]) >= 0x20 &&
             static_cast<unsigned char>(text[run]) < 0x7F) {
        ++run;
      }
      out->append(text.data() + i, run - i);
      i = run;
      continue;
    }
    if (c < 0x80) {  // C0 control or DEL
      out->push_back('?');
      ++i;
      continue;
    }
    size_t length = Utf8SequenceLength(text.substr(i));
    bool c1_control = length == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (length == 0 || c1_control) {
      out->push_back('?');
      i += length == 0 ? 1 : length;
      continue;
    }
    out->append(text.data() + i, length);
    i += length;
  }
}

std::string SanitizeComm(absl::string_view comm) {
  std::string out;
  AppendSanitized(comm, &out);
  if (out.empty()) return "?";
  if (out[0] == ' ' || out[0] == '#') out[0] = '?';
  return out;
}

std::string SanitizeModule(absl::string_view module) {
  std::string out;
  AppendSanitized(module, &out);
  for (char& c : out) {
    if (c == '(') c = '[';
    if (c == ')') c = ']';
  }
  return out;
}

std::string SanitizeEvent(absl::string_view event) {
  std::string out;
  AppendSanitized(event, &out);
  if (out.empty()) return std::string(kUnknownFrame);
  for (char& c : out) {
    if (c == ' ') c = '_';
  }
  return out;
}

std::string ModuleForLocation(const symbolize::Symbolization* symbolization,
                              const Location& location) {
  if (symbolization != nullptr && !symbolization->module.empty()) {
    return SanitizeModule(symbolization->module);
  }
  return std::string(location.kernel ? "[kernel.kallsyms]" : kUnknownFrame);
}

void AppendFrameLines(const symbolize::SymbolTable& symbols, const Location& location,
                      std::string* out, FrameDialect dialect) {
  const symbolize::Symbolization* symbolization = symbols.Find(location.code);
  const std::string module = ModuleForLocation(symbolization, location);
  auto append_unknown = [&] {
    out->push_back('\t');
    AppendHex(location.address, out);
    out->append(" [unknown] (");
    out->append(module);
    out->append(")\n");
  };
  if (symbolization == nullptr || symbolization->frames.empty()) {
    append_unknown();
    return;
  }
  for (const symbolize::Frame& frame : symbolization->frames) {
    if (frame.function.empty()) {
      append_unknown();  // a nameless frame names nothing, inlined or not
      continue;
    }
    out->push_back('\t');
    AppendHex(location.address, out);
    out->push_back(' ');
    if (dialect == FrameDialect::kPerfView) {
      // PerfView takes the first bracketed word of a perf-map name for the
      // module and what follows for the method (GetSymbolFromMicrosoftMap),
      // and shows them as "Assembly!Method": the assembly goes back first.
      std::string name;
      const absl::string_view assembly = symbolize::TrailingAssembly(frame.function);
      if (!assembly.empty()) {
        AppendSanitized(absl::StrCat("[", assembly, "] ",
                                     symbolize::WithoutTrailingAssembly(frame.function)),
                        &name);
      } else {
        AppendSanitized(frame.function, &name);
      }
      if (!frame.inlined) AppendPerfViewModuleWord(module, name, out);
      out->append(name);
    } else {
      AppendSanitized(frame.function, out);
      AppendOffset(frame.offset + location.offset_adjust, out);
    }
    // perf 6.1 (util/evsel_fprintf.c) prints no module for inlined frames.
    if (frame.inlined) {
      out->append(" (inlined)\n");
    } else {
      out->append(" (");
      out->append(module);
      out->append(")\n");
    }
  }
}

namespace {

// Digits of `value`, right-aligned in `width` by `pad` (printf's "%5u" with
// ' ', "%06u" with '0'); wider values are written whole, as printf does.
char* FormatUnsigned(uint64_t value, int width, char pad, char* out) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (int i = n; i < width; ++i) *out++ = pad;
  while (n > 0) *out++ = digits[--n];
  return out;
}

}  // namespace

void AppendSampleThread(absl::string_view comm, const Sample& sample, std::string* out) {
  out->append(comm.data(), comm.size());
  // stackcollapse-perf.pl's and our reader's header pattern, /^(\S.+?)\s+(\d+)/,
  // takes at least two bytes of comm: after a one-byte comm a pid too wide
  // for %5d's padding ("a 400549/...") would be read as part of the comm.
  if (comm.size() < 2 && sample.pid >= 10000) out->push_back(' ');
  // perf prints pid, tid and cpu as int: " %5d/%-5d [%03d] ". Written by
  // hand, as printf is a third of the cost of writing a sample; a value that
  // would print negative (a huge pid or cpu) goes through snprintf.
  char buffer[64];
  size_t n;
  if (static_cast<int>(sample.pid) < 0 || static_cast<int>(sample.tid) < 0 ||
      static_cast<int>(sample.cpu) < 0) {
    n = static_cast<size_t>(std::snprintf(buffer, sizeof(buffer), " %5d/%-5d [%03d] ",
                                          static_cast<int>(sample.pid),
                                          static_cast<int>(sample.tid),
                                          static_cast<int>(sample.cpu)));
  } else {
    char* p = buffer;
    *p++ = ' ';
    p = FormatUnsigned(sample.pid, 5, ' ', p);
    *p++ = '/';
    char* tid_start = p;
    p = FormatUnsigned(sample.tid, 0, ' ', p);
    while (p - tid_start < 5) *p++ = ' ';
    *p++ = ' ';
    *p++ = '[';
    p = FormatUnsigned(sample.cpu, 3, '0', p);
    *p++ = ']';
    *p++ = ' ';
    n = static_cast<size_t>(p - buffer);
  }
  out->append(buffer, n);
}

void AppendSampleTime(uint64_t time_ns, std::string* out) {
  char buffer[32];  // "%5lu.%06lu"
  char* p = FormatUnsigned(time_ns / 1000000000, 5, ' ', buffer);
  *p++ = '.';
  p = FormatUnsigned(time_ns % 1000000000 / 1000, 6, '0', p);
  out->append(buffer, static_cast<size_t>(p - buffer));
}

void AppendSampleEvent(uint64_t period, absl::string_view event, int event_width,
                       std::string* out) {
  char buffer[32];  // ": %10lu "
  char* p = buffer;
  *p++ = ':';
  *p++ = ' ';
  p = FormatUnsigned(period, 10, ' ', p);
  *p++ = ' ';
  out->append(buffer, static_cast<size_t>(p - buffer));
  for (int pad = event_width - static_cast<int>(event.size()); pad > 0; --pad) {
    out->push_back(' ');
  }
  out->append(event.data(), event.size());
  out->append(": \n");
}

void AppendSampleHeader(absl::string_view comm, const Sample& sample, absl::string_view event,
                        int event_width, std::string* out) {
  AppendSampleThread(comm, sample, out);
  AppendSampleTime(sample.time_ns, out);
  AppendSampleEvent(sample.period, event, event_width, out);
}

}  // namespace profcpu::fold
