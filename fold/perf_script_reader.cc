#include "fold/perf_script_reader.h"

#include <string.h>

#include <algorithm>

#include "fold/frame_name.h"

namespace profcpu::fold {

bool ParseHeaderLine(absl::string_view line, HeaderLine* header) {
  // /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/: the comm is the shortest prefix of at
  // least two bytes, starting with a non-space, that is followed by
  // whitespace, digits, optional slashes and digits, and whitespace again.
  // For a whitespace run [a, b) every comm end in [max(a, 2), b) leaves the
  // same tail (\s+ runs to b), and a failed tail cannot succeed by
  // backtracking (a shorter digit run is followed by a digit or '/', not by
  // whitespace), so each run needs one check.
  const size_t n = line.size();
  if (n < 2 || IsPerlSpace(line[0])) return false;
  size_t p = 1;
  while (p < n) {
    while (p < n && !IsPerlSpace(line[p])) ++p;
    if (p == n) return false;
    size_t run_begin = p;
    while (p < n && IsPerlSpace(line[p])) ++p;
    size_t comm_end = std::max<size_t>(run_begin, 2);
    if (comm_end >= p) continue;  // a one-byte run at index 1: the comm must go on
    size_t q = p;
    while (q < n && IsPerlDigit(line[q])) ++q;
    if (q == p) continue;
    size_t pid_end = q;
    while (q < n && line[q] == '/') ++q;
    size_t tid_begin = q;
    while (q < n && IsPerlDigit(line[q])) ++q;
    if (q == n || !IsPerlSpace(line[q])) continue;

    header->comm = line.substr(0, comm_end);
    header->pid = line.substr(p, pid_end - p);
    header->tid = line.substr(tid_begin, q - tid_begin);
    // "if (not $tid)": no second number, or one that is exactly "0" (false in
    // Perl), means the only id is the tid and the pid is unknown.
    if (header->tid.empty() || header->tid == "0") {
      header->tid = header->pid;
      header->pid = "?";
    }
    header->has_event = ParseHeaderEvent(line, &header->period, &header->event);
    if (!header->has_event) {
      header->period = {};
      header->event = {};
    }
    return true;
  }
  return false;
}

bool ParseHeaderEvent(absl::string_view line, absl::string_view* period,
                      absl::string_view* event) {
  // /:\s*(\d+)*\s+(\S+):\s*$/ is anchored at the end: the last non-space byte
  // must be ':', the event is the rest of that whitespace-delimited token, and
  // between a ':' and the token there may only be spaces, one digit run (the
  // period) and at least one space. That ':' is the last one before the
  // token, so one backward pass decides.
  size_t end = line.size();
  while (end > 0 && IsPerlSpace(line[end - 1])) --end;
  if (end == 0 || line[end - 1] != ':') return false;
  size_t token = end - 1;
  while (token > 0 && !IsPerlSpace(line[token - 1])) --token;
  if (token == 0 || token + 1 == end) return false;
  size_t k = token;
  while (k > 0 && IsPerlSpace(line[k - 1])) --k;
  size_t digits_end = k;
  while (k > 0 && IsPerlDigit(line[k - 1])) --k;
  size_t digits_begin = k;
  while (k > 0 && IsPerlSpace(line[k - 1])) --k;
  if (k == 0 || line[k - 1] != ':') return false;
  *period = line.substr(digits_begin, digits_end - digits_begin);
  *event = line.substr(token, end - 1 - token);
  return true;
}

bool ParseFrameLine(absl::string_view line, FrameLine* frame) {
  // /^\s*(\w+)\s*(.+) \((.*)\)/ with its backtracking: the module ends at
  // the last ')' and starts after the last " (" before it; the symbol is
  // what lies between the pc (and the spaces after it) and that " (". When
  // the symbol would be empty the engine gives it one byte taken back from
  // the spaces, or else from the pc.
  const size_t n = line.size();
  size_t pc_begin = 0;
  while (pc_begin < n && IsPerlSpace(line[pc_begin])) ++pc_begin;
  size_t pc_end = pc_begin;
  while (pc_end < n && IsPerlWord(line[pc_end])) ++pc_end;
  if (pc_end == pc_begin) return false;
  size_t symbol_begin = pc_end;
  while (symbol_begin < n && IsPerlSpace(line[symbol_begin])) ++symbol_begin;

  // memrchr rather than string_view::rfind: this is the hot loop, and
  // Debian's Abseil does not inline rfind.
  const char* data = line.data();
  const char* close_at = static_cast<const char*>(memrchr(data, ')', n));
  if (close_at == nullptr || close_at - data < 2) return false;
  const size_t close = static_cast<size_t>(close_at - data);
  // The last " (" whose '(' is before the closing ')'.
  size_t open = absl::string_view::npos;  // index of the ' '
  size_t search_end = close;              // look for '(' in [1, search_end)
  while (search_end > 1) {
    const char* paren = static_cast<const char*>(memrchr(data + 1, '(', search_end - 1));
    if (paren == nullptr) break;
    if (paren[-1] == ' ') {
      open = static_cast<size_t>(paren - 1 - data);
      break;
    }
    search_end = static_cast<size_t>(paren - data);
  }
  if (open == absl::string_view::npos) return false;

  if (open >= symbol_begin + 1) {
    frame->pc = line.substr(pc_begin, pc_end - pc_begin);
    frame->symbol = line.substr(symbol_begin, open - symbol_begin);
  } else if (open >= pc_end + 1) {
    frame->pc = line.substr(pc_begin, pc_end - pc_begin);
    frame->symbol = line.substr(open - 1, 1);
  } else if (open == pc_end && pc_end - pc_begin >= 2) {
    frame->pc = line.substr(pc_begin, pc_end - 1 - pc_begin);
    frame->symbol = line.substr(pc_end - 1, 1);
  } else {
    return false;
  }
  frame->module = line.substr(open + 2, close - open - 2);
  return true;
}

LineKind ClassifyLine(absl::string_view line, HeaderLine* header, FrameLine* frame) {
  if (line.empty()) return LineKind::kBlank;
  if (line[0] == '#') return LineKind::kComment;
  if (ParseHeaderLine(line, header)) return LineKind::kHeader;
  if (ParseFrameLine(line, frame)) return LineKind::kFrame;
  return LineKind::kUnrecognized;
}

}  // namespace profcpu::fold
