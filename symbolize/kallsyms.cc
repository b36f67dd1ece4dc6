#include "symbolize/kallsyms.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/file_io.h"
#include "symbolize/parse_hex.h"
#include "symbolize/symbol_aliases.h"

namespace profcpu::symbolize {
namespace {

// KSYM_NAME_LEN is 512 since Linux 6.1; anything longer is not kallsyms.
constexpr size_t kMaxNameLength = 1024;
constexpr size_t kMaxSymbols = 4'000'000;

struct Parsed {
  uint64_t address = 0;
  char type = 0;
  absl::string_view name;
  absl::string_view module;  // without brackets; empty for the core kernel
};

// "ADDRESS TYPE NAME" optionally followed by "\t[MODULE]".
bool ParseLine(absl::string_view line, Parsed* out) {
  size_t space = line.find(' ');
  if (space == absl::string_view::npos || !ParseHex(line.substr(0, space), &out->address)) {
    return false;
  }
  line.remove_prefix(space + 1);
  if (line.size() < 3 || line[1] != ' ') return false;
  out->type = line[0];
  line.remove_prefix(2);
  out->module = {};
  if (size_t tab = line.find('\t'); tab != absl::string_view::npos) {
    absl::string_view module = line.substr(tab + 1);
    if (module.size() < 3 || module.front() != '[' || module.back() != ']') return false;
    out->module = module.substr(1, module.size() - 2);
    line = line.substr(0, tab);
  }
  if (line.empty() || line.size() > kMaxNameLength) return false;
  out->name = line;
  return true;
}

bool IsText(char type) { return type == 't' || type == 'T' || type == 'w' || type == 'W'; }

}  // namespace

absl::StatusOr<Kallsyms> Kallsyms::Parse(absl::string_view text) {
  struct Candidate {
    uint64_t address;
    uint32_t name_offset;
    uint32_t name_length;
    uint32_t module;
    char type;
    size_t order;
  };
  Kallsyms out;
  out.modules_.emplace_back(kKernelModule);
  absl::flat_hash_map<std::string, uint32_t> module_ids;
  std::vector<Candidate> candidates;
  size_t lines = 0;
  bool any_address = false;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++lines;
    Parsed parsed;
    if (!ParseLine(line, &parsed)) {
      ++out.malformed_lines_;
      continue;
    }
    if (parsed.address != 0) any_address = true;
    if (!IsText(parsed.type) || candidates.size() >= kMaxSymbols) continue;
    uint32_t module = 0;
    if (!parsed.module.empty()) {
      auto [it, inserted] =
          module_ids.try_emplace(parsed.module, static_cast<uint32_t>(out.modules_.size()));
      if (inserted) out.modules_.push_back(absl::StrCat("[", parsed.module, "]"));
      module = it->second;
    }
    candidates.push_back({parsed.address, static_cast<uint32_t>(out.names_.size()),
                          static_cast<uint32_t>(parsed.name.size()), module, parsed.type,
                          candidates.size()});
    out.names_.append(parsed.name.data(), parsed.name.size());
  }
  if (lines > 0 && !any_address && lines > out.malformed_lines_) {
    return absl::FailedPreconditionError(
        "kernel symbols are hidden (every kallsyms address is 0): run with CAP_SYSLOG or set "
        "kernel.kptr_restrict=0");
  }
  if (candidates.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no kernel text symbols in ", lines, " lines of kallsyms"));
  }

  // Among aliases at one address, prefer as perf does (choose_best_symbol):
  // non-weak over weak, global over local, fewer leading underscores, longer
  // name; then the first listed.
  auto key = [&out](const Candidate& c) {
    absl::string_view name = absl::string_view(out.names_).substr(c.name_offset, c.name_length);
    bool weak = c.type == 'w' || c.type == 'W';
    bool global = c.type == 'T' || c.type == 'W';
    return std::make_tuple(c.address, weak, !global, LeadingUnderscores(name),
                           -static_cast<int64_t>(name.size()), c.order);
  };
  std::sort(candidates.begin(), candidates.end(),
            [&key](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
  for (const Candidate& c : candidates) {
    if (!out.symbols_.empty() && out.symbols_.back().address == c.address) continue;
    out.symbols_.push_back({c.address, 0, c.name_offset, c.name_length, c.module});
  }
  for (size_t i = 0; i < out.symbols_.size(); ++i) {
    Symbol& s = out.symbols_[i];
    if (i + 1 < out.symbols_.size()) {
      s.end = out.symbols_[i + 1].address;
    } else {
      // perf's symbols__fixup_end: the last symbol ends a page past its start
      // rounded up to a page.
      uint64_t rounded = (s.address + kPageSize - 1) / kPageSize * kPageSize;
      s.end =
          rounded < s.address || rounded + kPageSize < rounded ? UINT64_MAX : rounded + kPageSize;
    }
  }
  return out;
}

absl::StatusOr<Kallsyms> Kallsyms::Load(const std::string& path) {
  absl::StatusOr<std::string> text = base::ReadFileBounded(path, kMaxBytes);
  if (!text.ok()) return text.status();
  absl::StatusOr<Kallsyms> parsed = Parse(*text);
  if (!parsed.ok()) {
    return absl::Status(parsed.status().code(),
                        absl::StrCat(path, ": ", parsed.status().message()));
  }
  return parsed;
}

std::optional<KernelSymbolMatch> Kallsyms::Lookup(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return std::nullopt;
  --it;
  if (address >= it->end) return std::nullopt;
  return KernelSymbolMatch{absl::string_view(names_).substr(it->name_offset, it->name_length),
                           address - it->address, modules_[it->module]};
}

}  // namespace profcpu::symbolize
