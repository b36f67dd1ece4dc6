#include "symbolize/module_symbolizer.h"

#include <sys/stat.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "symbolize/module_symbols.h"

namespace profcpu::symbolize {
namespace {

// A debug file found by name is only as good as what ties it to the module.
// Returns "" when `candidate` is acceptable, else why not.
std::string RejectReason(const ElfSymbols& candidate, int fd, const DebugFileQuery& query,
                         DebugFileRule rule, const ModuleSymbolizerLimits& limits) {
  if (!candidate.has_dwarf() && !candidate.has_symtab()) {
    return "it holds no debug information";  // e.g. the stripped file itself
  }
  const std::string& found = candidate.build_id();
  if (!query.build_id.empty() && !found.empty()) {
    return found == query.build_id
               ? ""
               : absl::StrCat("its build-id ", absl::BytesToHexString(found), " is not ",
                              absl::BytesToHexString(query.build_id));
  }
  // Build-ids cannot decide: a debuglink's CRC can, for the files it names.
  // (A flat file in a symbol directory may be named by the link or by the
  // module's file name; the CRC settles either.)
  const bool named_by_link = IsDebugLinkRule(rule) || rule == DebugFileRule::kFlat;
  if (query.debug_link.has_value() && named_by_link) {
    absl::StatusOr<uint32_t> crc = DebugLinkCrc(fd, limits.max_crc_bytes);
    if (!crc.ok()) return std::string(crc.status().message());
    if (*crc != query.debug_link->crc) {
      return absl::StrCat("its CRC ", absl::Hex(*crc, absl::kZeroPad8), " is not the debuglink's ",
                          absl::Hex(query.debug_link->crc, absl::kZeroPad8));
    }
    return "";
  }
  // Only the path ties it, as for perf and GDB; but a module with a build-id
  // must not be given a debug file without one.
  if (rule == DebugFileRule::kPath && query.build_id.empty()) return "";
  return "nothing ties it to the module (no matching build-id or debuglink CRC)";
}

}  // namespace

absl::StatusOr<FoundDebugFile> FindDebugFile(const DebugFileQuery& query,
                                             const std::vector<DebugSearchRoot>& roots,
                                             const ModuleSymbolizerLimits& limits,
                                             std::vector<std::string>* warnings) {
  for (const DebugFileCandidate& candidate : DebugFileCandidates(query, roots)) {
    absl::StatusOr<base::UniqueFd> fd = candidate.where->root->OpenFile(candidate.path);
    if (!fd.ok()) continue;
    struct stat st;
    if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    std::string where = absl::StrCat(candidate.path, " in ", candidate.where->description);
    absl::StatusOr<std::unique_ptr<ElfSymbols>> debug =
        ElfSymbols::FromFd(fd->get(), where, limits.elf);
    if (!debug.ok()) {
      warnings->push_back(absl::StrCat("ignoring debug file ", where, ": ", debug.status().message()));
      continue;
    }
    std::string reason = RejectReason(**debug, fd->get(), query, candidate.rule, limits);
    if (!reason.empty()) {
      warnings->push_back(absl::StrCat("ignoring debug file ", where, " for ", query.module_path,
                                       ": ", reason));
      continue;
    }
    return FoundDebugFile{std::move(*fd), std::move(*debug), std::move(where), candidate.rule};
  }
  return absl::NotFoundError(absl::StrCat("no debug file for ", query.module_path));
}

struct ModuleSymbolizerLoader {
  static absl::StatusOr<LoadedModule> Load(const Module& module, const base::RootDir* target_root,
                                           const std::vector<DebugSearchRoot>& debug_roots,
                                           const ModuleSymbolizerLimits& limits) {
    LoadedModule out;
    out.symbolizer.reset(new ModuleSymbolizer());
    ModuleSymbolizer& s = *out.symbolizer;
    s.build_id_ = module.build_id;
    s.segments_ = module.segments;

    absl::Status binary_status = absl::NotFoundError("the target's files are not reachable");
    if (target_root != nullptr) {
      absl::StatusOr<ModuleSymbols> binary = LoadModuleSymbols(*target_root, module, limits.elf);
      if (binary.ok()) {
        if (!binary->warning.empty()) out.warnings.push_back(std::move(binary->warning));
        s.binary_ = std::move(binary->symbols);
        if (s.build_id_.empty()) s.build_id_ = s.binary_->build_id();
        s.segments_ = s.binary_->load_segments();
      } else {
        binary_status = binary.status();
      }
    }

    // Look for a debug file unless the file itself carries DWARF.
    if (s.binary_ == nullptr || !s.binary_->has_dwarf()) {
      DebugFileQuery query;
      absl::string_view path = module.path;
      absl::ConsumeSuffix(&path, kDeletedSuffix);
      query.module_path = std::string(path);
      query.build_id = s.build_id_;
      if (s.binary_ != nullptr) query.debug_link = s.binary_->debug_link();
      absl::StatusOr<FoundDebugFile> found =
          FindDebugFile(query, debug_roots, limits, &out.warnings);
      if (found.ok()) {
        const std::string& where = found->description;
        if (found->symbols->has_dwarf()) {
          absl::StatusOr<std::unique_ptr<DwarfSymbols>> dwarf =
              DwarfSymbols::FromFd(found->fd.get(), where, limits.dwarf);
          if (dwarf.ok()) {
            s.dwarf_ = std::move(*dwarf);
          } else {
            out.warnings.push_back(absl::StrCat("no DWARF from ", where, ": ",
                                                dwarf.status().message()));
          }
        }
        s.debug_file_ = absl::StrCat(where, " (", DebugFileRuleName(found->rule), ")");
        if (found->symbols->has_symtab()) s.debug_ = std::move(found->symbols);
        if (s.build_id_.empty() && s.debug_ != nullptr) s.build_id_ = s.debug_->build_id();
      }
    } else {
      absl::StatusOr<base::UniqueFd> fd = target_root->OpenFile(
          std::string(absl::StripSuffix(module.path, kDeletedSuffix)));
      if (fd.ok()) {
        absl::StatusOr<std::unique_ptr<DwarfSymbols>> dwarf =
            DwarfSymbols::FromFd(fd->get(), module.path, limits.dwarf);
        if (dwarf.ok()) {
          s.dwarf_ = std::move(*dwarf);
        } else {
          out.warnings.push_back(absl::StrCat("no DWARF from ", module.path, ": ",
                                              dwarf.status().message()));
        }
      }
    }

    if (s.binary_ == nullptr && s.debug_ == nullptr && s.dwarf_ == nullptr) {
      // The candidates turned down say why none was used (another build's
      // debug file under this build-id's name, ...).
      std::string rejected =
          out.warnings.empty() ? "" : absl::StrCat(" (", absl::StrJoin(out.warnings, "; "), ")");
      return absl::Status(binary_status.code(),
                          absl::StrCat(binary_status.message(),
                                       s.build_id_.empty()
                                           ? "; no build-id is known to find a debug file by"
                                           : "; no debug file with its build-id was found",
                                       rejected));
    }
    if (s.segments_.empty()) {
      out.warnings.push_back(absl::StrCat(
          module.path, ": its load layout is unknown (the file was not readable when the profile "
                       "was taken), so its debug file cannot be used"));
    }
    return out;
  }
};

absl::StatusOr<LoadedModule> LoadModuleSymbolizer(const Module& module,
                                                  const base::RootDir* target_root,
                                                  const std::vector<DebugSearchRoot>& debug_roots,
                                                  const ModuleSymbolizerLimits& limits) {
  return ModuleSymbolizerLoader::Load(module, target_root, debug_roots, limits);
}

size_t ModuleSymbolizer::EstimatedBytes() const {
  return sizeof(*this) + build_id_.capacity() + segments_.capacity() * sizeof(LoadSegment) +
         debug_file_.capacity() + (binary_ == nullptr ? 0 : binary_->EstimatedBytes()) +
         (debug_ == nullptr ? 0 : debug_->EstimatedBytes()) +
         (dwarf_ == nullptr ? 0 : dwarf_->EstimatedBytes());
}

std::vector<Frame> ModuleSymbolizer::Lookup(uint64_t file_offset) {
  std::vector<Frame> frames;
  std::optional<uint64_t> address = FileOffsetToAddress(segments_, file_offset);
  if (!address.has_value()) return frames;
  // The full .symtab wins over a stripped file's .dynsym.
  std::optional<SymbolMatch> symbol;
  if (debug_ != nullptr && (binary_ == nullptr || !binary_->has_symtab())) {
    symbol = debug_->LookupAddress(*address);
  }
  if (!symbol.has_value() && binary_ != nullptr) symbol = binary_->LookupAddress(*address);
  if (dwarf_ != nullptr) frames = dwarf_->Lookup(*address);
  if (frames.empty()) {
    if (symbol.has_value()) {
      frames.push_back(Frame{std::move(symbol->function), symbol->offset, false, "", 0});
    }
    return frames;
  }
  if (symbol.has_value()) {
    // The ELF symbol names the real function as every other path does; DWARF
    // adds what only it knows: inlined calls and lines.
    frames.back().function = std::move(symbol->function);
    for (Frame& frame : frames) frame.offset = symbol->offset;
  }
  return frames;
}

}  // namespace profcpu::symbolize
