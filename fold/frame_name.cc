#include "fold/frame_name.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "symbolize/dotnet_assembly.h"
#include "symbolize/dotnet_tier.h"

namespace profcpu::fold {
namespace {

constexpr absl::string_view kAnonymousNamespace = "anonymous namespace)";

bool IsLowerHex(char c) { return IsPerlDigit(c) || (c >= 'a' && c <= 'f'); }

// The hot paths search with memchr directly: Debian's Abseil keeps
// string_view::find out of line.
size_t FindChar(absl::string_view s, char c, size_t from = 0) {
  if (from >= s.size()) return absl::string_view::npos;
  const void* at = std::memchr(s.data() + from, c, s.size() - from);
  return at == nullptr ? absl::string_view::npos
                       : static_cast<size_t>(static_cast<const char*>(at) - s.data());
}

size_t FindArrow(absl::string_view s) {
  for (size_t at = FindChar(s, '-'); at != absl::string_view::npos; at = FindChar(s, '-', at + 1)) {
    if (at + 1 < s.size() && s[at + 1] == '>') return at;
  }
  return absl::string_view::npos;
}

}  // namespace

absl::string_view StripSymbolOffset(absl::string_view symbol) {
  // s/\+0x[\da-f]+$//: the hex run must reach the end, and 'x' is not a hex
  // digit, so the run is exactly the maximal lowercase-hex suffix.
  size_t hex = symbol.size();
  while (hex > 0 && IsLowerHex(symbol[hex - 1])) --hex;
  if (hex < symbol.size() && hex >= 3 && symbol.substr(hex - 3, 3) == "+0x") {
    return symbol.substr(0, hex - 3);
  }
  return symbol;
}

absl::string_view ModuleBasename(absl::string_view module) {
  size_t slash = module.rfind('/');
  return slash == absl::string_view::npos ? module : module.substr(slash + 1);
}

bool IsKernelModule(absl::string_view module) {
  return (absl::StartsWith(module, "[") || absl::EndsWith(module, "vmlinux")) &&
         !absl::StrContains(module, "unknown");
}

bool IsJitModule(absl::string_view module) {
  constexpr absl::string_view kPrefix = "/tmp/perf-";
  for (size_t at = module.find(kPrefix); at != absl::string_view::npos;
       at = module.find(kPrefix, at + 1)) {
    size_t i = at + kPrefix.size();
    size_t digits = i;
    while (i < module.size() && IsPerlDigit(module[i])) ++i;
    if (i > digits && module.substr(i, 4) == ".map") return true;
  }
  return false;
}

bool LooksLikeGoMethod(absl::string_view name) {
  // /\.\(.*\)\./ holds iff the first ".(" starts at least two bytes before
  // the last ")." (".()." is the shortest match).
  size_t open = name.find(".(");
  if (open == absl::string_view::npos) return false;
  size_t close = name.rfind(").");
  return close != absl::string_view::npos && close >= open + 2;
}

void AppendTidyName(absl::string_view name, std::string* out) {
  size_t cut = FindChar(name, '(');
  if (cut != absl::string_view::npos && !LooksLikeGoMethod(name)) {
    // s/\((?!anonymous namespace\)).*//
    while (cut != absl::string_view::npos &&
           name.substr(cut + 1, kAnonymousNamespace.size()) == kAnonymousNamespace) {
      cut = FindChar(name, '(', cut + 1);
    }
    if (cut != absl::string_view::npos) name = name.substr(0, cut);
  }
  // s/;/:/g and tr/"'//d, appending clean runs in bulk.
  size_t run = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c != ';' && c != '"' && c != '\'') continue;
    out->append(name.data() + run, i - run);
    if (c == ';') out->push_back(':');
    run = i + 1;
  }
  out->append(name.data() + run, name.size() - run);
}

void AppendRootName(absl::string_view comm, absl::string_view pid, absl::string_view tid,
                    bool include_pid, bool include_tid, std::string* out) {
  size_t start = out->size();
  out->append(comm.data(), comm.size());
  if (include_tid) {
    out->push_back('-');
    out->append(pid.data(), pid.size());
    out->push_back('/');
    out->append(tid.data(), tid.size());
  } else if (include_pid) {
    out->push_back('-');
    out->append(pid.data(), pid.size());
  }
  // tr/ /_/ on the whole name: only spaces, not tabs.
  for (size_t i = start; i < out->size(); ++i) {
    if ((*out)[i] == ' ') (*out)[i] = '_';
  }
}

int FrameNamer::AppendNames(absl::string_view pc, absl::string_view symbol,
                            absl::string_view module, bool java, std::string* out) {
  symbol = StripSymbolOffset(symbol);
  // The script skips "(...)" symbols: perf prints process names that way.
  if (!symbol.empty() && symbol[0] == '(' &&
      !(options_.keep_anonymous_namespaces &&
        symbol.substr(1, kAnonymousNamespace.size()) == kAnonymousNamespace)) {
    return 0;
  }
  // split /->/ drops trailing empty fields (and yields nothing for ""), so
  // trailing "->" separators contribute nothing. "->" cannot overlap itself,
  // so stripping from the right finds the same separators as splitting from
  // the left.
  while (absl::EndsWith(symbol, "->")) symbol.remove_suffix(2);
  if (symbol.empty()) return 0;

  int count = 0;
  while (true) {
    size_t arrow = FindArrow(symbol);
    absl::string_view part = symbol.substr(0, arrow);
    if (count > 0) out->push_back(';');
    AppendOne(pc, part, module, java, /*inlined=*/count > 0, out);
    ++count;
    if (arrow == absl::string_view::npos) break;
    symbol.remove_prefix(arrow + 2);
  }
  return count;
}

void FrameNamer::AppendOne(absl::string_view pc, absl::string_view part,
                           absl::string_view module, bool java, bool inlined,
                           std::string* out) {
  size_t start = out->size();
  if (part == kUnknownFrame) {
    // An unnamed address is shown by its module, when that is known.
    scratch_.clear();
    scratch_.push_back('[');
    if (module != kUnknownFrame) {
      absl::string_view base = ModuleBasename(module);
      scratch_.append(base.data(), base.size());
    } else {
      scratch_.append("unknown");
    }
    if (options_.include_addrs) {
      scratch_.append(" <");
      scratch_.append(pc.data(), pc.size());
      scratch_.push_back('>');
    }
    scratch_.push_back(']');
    AppendTidyName(scratch_, out);
  } else {
    // A .NET method ends with its assembly ("Ns.T::M(int32)[Tier] [App]",
    // symbolize/dotnet_assembly.h), which the argument list's cut would lose.
    const absl::string_view assembly = symbolize::TrailingAssembly(part);
    const absl::string_view method = symbolize::WithoutTrailingAssembly(part);
    AppendTidyName(method, out);
    if (options_.keep_dotnet_tiers) {
      const absl::string_view tier = symbolize::TierOf(method);
      absl::string_view name(out->data() + start, out->size() - start);
      if (!tier.empty() && !absl::EndsWith(name, "]")) absl::StrAppend(out, "[", tier, "]");
    }
    if (!assembly.empty()) absl::StrAppend(out, " [", assembly, "]");
  }

  // Java signatures "Lorg/foo/Bar;.baz" lose their type-descriptor 'L' (the
  // ';' already became ':' above).
  if (java && out->size() > start && (*out)[start] == 'L' &&
      std::memchr(out->data() + start, '/', out->size() - start) != nullptr) {
    out->erase(start, 1);
  }

  absl::string_view name(out->data() + start, out->size() - start);
  if (inlined) {
    if (!absl::StrContains(name, "_[i]")) out->append("_[i]");
  } else if (options_.annotate_kernel && IsKernelModule(module)) {
    out->append("_[k]");
  } else if (options_.annotate_precompiled &&
             absl::EndsWith(symbolize::WithoutTrailingAssembly(part), "[PreJIT]")) {
    out->append("_[p]");
  } else if (options_.annotate_jit && IsJitModule(module)) {
    if (!absl::StrContains(name, "_[j]")) out->append("_[j]");
  }
}

}  // namespace profcpu::fold
