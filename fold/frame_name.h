// The frame naming rules of stackcollapse-perf.pl (brendangregg/FlameGraph,
// commit 41fee1f), as functions both folding paths share: the text folder
// (stackcollapse.h) and the Profile folder (folded_writer.h). Sharing them is
// what makes a folded Profile and the folded perf script text of that Profile
// name every frame the same way.
//
// The script works on bytes with Perl's default (non-Unicode) regex rules, so
// \s is [ \t\n\v\f\r] and \w is [A-Za-z0-9_]; bytes >= 0x80 are neither and
// pass through untouched.
#ifndef PROFCPU_FOLD_FRAME_NAME_H_
#define PROFCPU_FOLD_FRAME_NAME_H_

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace profcpu::fold {

// The name perf script gives a frame it could not name.
inline constexpr absl::string_view kUnknownFrame = "[unknown]";

namespace internal {
// Byte classes as table lookups: these run for every byte of the hot lines.
inline constexpr uint8_t kPerlSpace = 1, kPerlWord = 2;
struct ByteClasses {
  uint8_t of[256] = {};
  constexpr ByteClasses() {
    for (char c : {' ', '\t', '\n', '\v', '\f', '\r'}) of[static_cast<uint8_t>(c)] |= kPerlSpace;
    for (int c = 0; c < 256; ++c) {
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
        of[c] |= kPerlWord;
      }
    }
  }
};
inline constexpr ByteClasses kByteClasses;
}  // namespace internal

// Perl's \s on a byte string (no locale, no unicode_strings).
inline bool IsPerlSpace(char c) {
  return internal::kByteClasses.of[static_cast<uint8_t>(c)] & internal::kPerlSpace;
}
// Perl's \w on a byte string.
inline bool IsPerlWord(char c) {
  return internal::kByteClasses.of[static_cast<uint8_t>(c)] & internal::kPerlWord;
}
inline bool IsPerlDigit(char c) { return c >= '0' && c <= '9'; }

// The script's options that change frame names.
struct FrameNameOptions {
  bool annotate_kernel = false;  // --kernel (or --all): "_[k]" on kernel frames
  bool annotate_jit = false;     // --jit (or --all): "_[j]" on /tmp/perf-N.map frames
  bool include_addrs = false;    // --addrs: "[module <pc>]" for unknown symbols
  // profcpu's own mark, not the script's: "_[p]" on .NET precompiled
  // (ReadyToRun) code, which CoreCLR's jitdump names "...[PreJIT]"; the
  // tidying below drops that tag with the argument list, so the mark keeps
  // the fact for the renderer's dotnet palette. Wins over "_[j]".
  bool annotate_precompiled = false;
  // profcpu's own, for its run outputs: keep a .NET JIT frame's tier
  // annotation ("Main[OptimizedTier1]", "Main[OptimizedTier1OSR]"), which the
  // tidying cuts with the argument list. Without it one method's tiers merge
  // and on-stack replacement reads as recursion ("Main;Main").
  bool keep_dotnet_tiers = false;
  // profcpu's own, for its run outputs: keep frames of functions in an
  // anonymous namespace ("(anonymous namespace)::Parse(char const*)"). The
  // script skips every symbol starting with '(' (perf's "(process name)"
  // lines), which drops such a function and puts its samples on its caller.
  bool keep_anonymous_namespaces = false;
};

// Drops a trailing "+0x<lowercase hex>" (perf >= 4.8 prints symbol offsets).
absl::string_view StripSymbolOffset(absl::string_view symbol);

// What is left of a module path after its last '/'.
absl::string_view ModuleBasename(absl::string_view module);

// A module the script treats as kernel code: "[...]" (e.g. "[kernel.kallsyms]",
// "[nf_conntrack]") or a path ending in "vmlinux", unless it says "unknown".
bool IsKernelModule(absl::string_view module);

// A module the script treats as JIT code: it contains "/tmp/perf-<digits>.map".
bool IsJitModule(absl::string_view module);

// Whether a name looks like a Go method ("net/http.(*Client).Do"): it has a
// ".(" and, at least one character later, a ")." — such names keep their
// parentheses.
bool LooksLikeGoMethod(absl::string_view name);

// Appends `name` tidied as the script's tidy_generic does: ';' becomes ':'
// (';' separates frames), everything from the first '(' that does not open
// "(anonymous namespace)" is dropped (argument lists, unless a Go method), and
// quote characters are removed.
void AppendTidyName(absl::string_view name, std::string* out);

// Whether the script applies its Java tidying to a stack: the root frame (the
// comm, after the pid/tid suffix and space replacement) starts with "java".
inline bool IsJavaRoot(absl::string_view root) { return absl::StartsWith(root, "java"); }

// Appends the root frame: "comm", "comm-PID" or "comm-PID/TID" (`include_tid`
// wins), with every space turned into '_'. Other bytes, ';' included, are kept
// as the script keeps them.
void AppendRootName(absl::string_view comm, absl::string_view pid, absl::string_view tid,
                    bool include_pid, bool include_tid, std::string* out);

// Names the frames of one perf script frame line. Reusable: keeps a scratch
// buffer so naming does not allocate in steady state.
class FrameNamer {
 public:
  explicit FrameNamer(const FrameNameOptions& options) : options_(options) {}

  // Appends, joined by ';', the names the line "<pc> <symbol> (<module>)"
  // contributes to a folded stack, outermost first: `symbol` minus its
  // offset, split on "->" (an inline chain "a->b": b is inlined into a and
  // gets "_[i]"), each part tidied and annotated. Returns how many names were
  // appended; 0 when the script skips the line (a symbol starting with '(' or
  // empty once its offset is dropped; "(anonymous namespace)::" is kept with
  // keep_anonymous_namespaces). No name contains ';'.
  int AppendNames(absl::string_view pc, absl::string_view symbol, absl::string_view module,
                  bool java, std::string* out);

 private:
  void AppendOne(absl::string_view pc, absl::string_view part, absl::string_view module,
                 bool java, bool inlined, std::string* out);

  FrameNameOptions options_;
  std::string scratch_;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_FRAME_NAME_H_
