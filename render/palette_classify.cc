#include "render/palette_classify.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace profcpu::render {
namespace {

using absl::EndsWith;
using absl::StartsWith;
using absl::StrContains;

// /^L?(java|javax|jdk|net|org|com|io|sun)\//: a Java class path.
bool LooksLikeJavaClass(absl::string_view name) {
  static constexpr absl::string_view kPackages[] = {"java", "javax", "jdk", "net",
                                                     "org",  "com",   "io",  "sun"};
  for (absl::string_view rest : {name, name.substr(StartsWith(name, "L") ? 1 : 0)}) {
    for (absl::string_view package : kPackages) {
      if (StartsWith(rest, package) && rest.size() > package.size() &&
          rest[package.size()] == '/') {
        return true;
      }
    }
  }
  return false;
}

// flamegraph.pl's java theme.
Palette JavaHue(absl::string_view name) {
  if (EndsWith(name, "_[j]")) return Palette::kGreen;  // JIT
  if (EndsWith(name, "_[i]")) return Palette::kAqua;   // inlined
  if (LooksLikeJavaClass(name)) return Palette::kGreen;
  if (StrContains(name, ":::")) return Palette::kGreen;  // perf-map-agent's separator
  if (StrContains(name, "::")) return Palette::kYellow;  // C++
  if (EndsWith(name, "_[k]")) return Palette::kOrange;
  return Palette::kRed;  // system
}

// flamegraph.pl's perl theme.
Palette PerlHue(absl::string_view name) {
  if (StrContains(name, "::")) return Palette::kYellow;
  if (StrContains(name, "Perl") || StrContains(name, ".pl")) return Palette::kGreen;
  if (EndsWith(name, "_[k]")) return Palette::kOrange;
  return Palette::kRed;
}

// flamegraph.pl's js theme.
Palette JsHue(absl::string_view name) {
  if (EndsWith(name, "_[j]")) {
    return StrContains(name, '/') ? Palette::kGreen : Palette::kAqua;  // source, builtin
  }
  if (StrContains(name, "::")) return Palette::kYellow;  // C++
  const size_t slash = name.find('/');
  if (slash != absl::string_view::npos && name.find(".js", slash + 1) != absl::string_view::npos) {
    return Palette::kGreen;  // JavaScript with a path
  }
  if (StrContains(name, ':')) return Palette::kAqua;  // a builtin
  if (name == " ") return Palette::kGreen;            // a missing symbol
  if (StrContains(name, "_[k]")) return Palette::kOrange;
  return Palette::kRed;
}

// profcpu names .NET methods "Ns.Type::Method[Tier] [Assembly]" (the
// assembly last: symbolize/dotnet_assembly.h), maybe with folding's "_[j]";
// CoreCLR's perf map and jitdump, read as they are (folded files of older
// runs, perf script text), "[ret] [Assembly] Ns.Type::Method": an assembly in
// brackets followed by a space, then a "::".
bool LooksLikeManagedMethod(absl::string_view name) {
  const size_t scope = name.find("::");
  if (scope == absl::string_view::npos) return false;
  const size_t close = name.substr(0, scope).rfind("] ");
  if (close != absl::string_view::npos &&
      name.substr(0, close).rfind('[') != absl::string_view::npos) {
    return true;
  }
  absl::string_view rest = name;
  if (rest.size() > 4 && absl::EndsWith(rest, "]") && rest[rest.size() - 5] == '_' &&
      rest[rest.size() - 4] == '[') {
    rest.remove_suffix(4);  // "_[j]" and the like
  }
  if (!absl::EndsWith(rest, "]")) return false;
  const size_t open = rest.rfind(" [");
  if (open == absl::string_view::npos || open < scope) return false;
  const absl::string_view assembly = rest.substr(open + 2, rest.size() - open - 3);
  return !assembly.empty() && !StartsWith(assembly, "clone ") &&
         assembly.find_first_of("[]()<>") == absl::string_view::npos;
}

// "[Name.dll]": stackcollapse names an unnamed address by its module, and an
// executable mapping of a .dll on Linux is a ReadyToRun image running in place.
bool IsAssemblyImage(absl::string_view name) {
  if (!StartsWith(name, "[") || !EndsWith(name, "]") || name.size() < 6) return false;
  absl::string_view ext = name.substr(name.size() - 5, 4);
  return absl::EqualsIgnoreCase(ext, ".dll");
}

}  // namespace

DotnetFrameKind ClassifyDotnetFrame(absl::string_view name) {
  if (EndsWith(name, "_[k]") || name == "[kernel.kallsyms]") return DotnetFrameKind::kKernel;
  if (EndsWith(name, "_[p]") || StrContains(name, "[PreJIT]") || IsAssemblyImage(name)) {
    return DotnetFrameKind::kPrecompiled;
  }
  if (EndsWith(name, "_[j]") || StartsWith(name, "stub<") ||
      (StartsWith(name, "[perf-") && EndsWith(name, ".map]")) || LooksLikeManagedMethod(name)) {
    return DotnetFrameKind::kJit;
  }
  if (StrContains(name, "::")) return DotnetFrameKind::kNativeCpp;
  return DotnetFrameKind::kNative;
}

Palette ResolvePalette(Palette palette, absl::string_view name) {
  switch (palette) {
    case Palette::kJava:
      return JavaHue(name);
    case Palette::kPerl:
      return PerlHue(name);
    case Palette::kJs:
      return JsHue(name);
    case Palette::kWakeup:
      return Palette::kAqua;
    case Palette::kChain:
      return StrContains(name, "_[w]") ? Palette::kAqua : Palette::kBlue;  // waker, off-CPU
    case Palette::kDotnet:
      switch (ClassifyDotnetFrame(name)) {
        case DotnetFrameKind::kKernel:
          return Palette::kOrange;
        case DotnetFrameKind::kJit:
          return Palette::kGreen;
        case DotnetFrameKind::kPrecompiled:
          return Palette::kBlue;
        case DotnetFrameKind::kNativeCpp:
          return Palette::kYellow;
        case DotnetFrameKind::kNative:
          return Palette::kRed;
      }
      return Palette::kRed;
    default:
      return palette;
  }
}

}  // namespace profcpu::render
