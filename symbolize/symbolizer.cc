#include "symbolize/symbolizer.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/kallsyms.h"
#include "symbolize/loaded_symbol_cache.h"
#include "symbolize/module_symbolizer.h"
#include "symbolize/jit_sources.h"
#include "symbolize/vdso_image.h"

namespace profcpu::symbolize {
namespace {

constexpr absl::string_view kUnknownModule = "[unknown]";
constexpr absl::string_view kVdso = "[vdso]";

}  // namespace

class Symbolizer::Impl {
 public:
  Impl(SymbolizerOptions options, const ProcessFiles* files, std::vector<Module>* modules,
       JitSources* jit)
      : options_(std::move(options)), files_(files), modules_(modules), jit_(jit) {
    if (jit_ == nullptr) {
      // No shared sources given: read each process's JIT files in its root.
      own_jit_files_ = std::make_unique<TargetJitFiles>(files_);
      own_jit_ = std::make_unique<JitSources>(own_jit_files_.get(), files_);
      jit_ = own_jit_.get();
    }
    std::vector<std::string> warnings;
    own_roots_ = OpenDebugSearchRoots(options_.own_root, options_.symbol_dirs,
                                      options_.debuginfod_cache, &warnings);
    for (std::string& w : warnings) Warn(std::move(w));
  }

  // Read in this run or an earlier one (the snapshot's modules keep it).
  uint64_t modules_with_debug_info() const {
    if (modules_ == nullptr) return 0;
    return std::count_if(modules_->begin(), modules_->end(),
                         [](const Module& m) { return m.debug_info; });
  }

  Symbolization Resolve(const SymbolRequest& request) {
    const CodeLocation& location = request.location;
    switch (location.kind) {
      case CodeKind::kKernel:
        return ResolveKernel(location.value);
      case CodeKind::kNative:
        return ResolveNative(request);
      case CodeKind::kProcess:
        return ResolveProcess(request);
      case CodeKind::kImported:
        break;  // named by the text it was read from; nothing to look up here
    }
    return Unnamed(request.mapping_name);
  }

  // True when module `id` was read without debug information (in this run
  // or the one the snapshot comes from) and a file named by its build-id is
  // now in one of the own roots: its unknown locations deserve another look.
  // The load verifies the file; this only looks for one.
  bool HasNewDebugFile(uint32_t id) {
    if (modules_ == nullptr || id >= modules_->size()) return false;
    auto [it, inserted] = new_debug_file_.try_emplace(id, false);
    if (!inserted) return it->second;
    const Module& module = (*modules_)[id];
    if (module.debug_info || module.build_id.empty()) return false;
    DebugFileQuery query;
    query.module_path = std::string(absl::StripSuffix(module.path, kDeletedSuffix));
    query.build_id = module.build_id;
    for (const DebugFileCandidate& candidate : DebugFileCandidates(query, own_roots_)) {
      if (candidate.rule != DebugFileRule::kBuildId) continue;
      absl::StatusOr<base::UniqueFd> fd = candidate.where->root->OpenFile(candidate.path);
      struct stat st;
      if (fd.ok() && ::fstat(fd->get(), &st) == 0 && S_ISREG(st.st_mode)) {
        return it->second = true;
      }
    }
    return false;
  }

  // Moves the warnings raised since the last call into `out`.
  void FlushWarnings(std::vector<std::string>* out) {
    jit_->TakeWarnings(&pending_warnings_);
    for (std::string& w : pending_warnings_) out->push_back(std::move(w));
    pending_warnings_.clear();
  }
  void FlushNotes(std::vector<std::string>* out) {
    for (std::string& n : notes_) out->push_back(std::move(n));
    notes_.clear();
  }

 private:
  static Symbolization Unnamed(absl::string_view module) {
    Symbolization s;
    s.module = module.empty() ? std::string(kUnknownModule) : std::string(module);
    return s;
  }
  static Symbolization Named(absl::string_view module, std::string function, uint64_t offset) {
    Symbolization s;
    s.module = std::string(module);
    s.frames.push_back(Frame{std::move(function), offset, false, "", 0});
    return s;
  }

  // Each distinct problem is reported once per Symbolizer, however many
  // addresses it affects.
  void Warn(std::string warning) {
    if (warned_.insert(warning).second) pending_warnings_.push_back(std::move(warning));
  }
  // Facts for the log that are not problems (which debug file was used).
  void Note(std::string note) { notes_.push_back(std::move(note)); }

  std::shared_ptr<base::RootDir> RootFor(uint32_t pid) {
    std::shared_ptr<base::RootDir> root = files_ == nullptr ? nullptr : files_->RootFor(pid);
    if (root == nullptr) {
      Warn(absl::StrCat("files of pid ", pid,
                        " are not available; its native and JIT frames stay unnamed"));
    }
    return root;
  }

  Symbolization ResolveKernel(uint64_t address) {
    if (!options_.use_local_kallsyms) return Unnamed(kKernelModule);
    if (!kallsyms_loaded_) {
      kallsyms_loaded_ = true;
      absl::StatusOr<std::shared_ptr<const Kallsyms>> loaded =
          options_.cache != nullptr ? options_.cache->LoadKallsyms(options_.kallsyms_path)
                                    : LoadKallsyms(options_.kallsyms_path);
      if (loaded.ok()) {
        kallsyms_ = std::move(*loaded);
      } else {
        Warn(std::string(loaded.status().message()));
      }
    }
    if (kallsyms_ == nullptr) return Unnamed(kKernelModule);
    std::optional<KernelSymbolMatch> match = kallsyms_->Lookup(address);
    if (!match.has_value()) return Unnamed(kKernelModule);
    return Named(match->module, std::string(match->name), match->offset);
  }

  Symbolization ResolveNative(const SymbolRequest& request) {
    const uint32_t id = request.location.space;
    if (modules_ == nullptr || id >= modules_->size()) {
      Warn(absl::StrCat("native location names module ", id, " but only ",
                        modules_ == nullptr ? 0 : modules_->size(), " modules are known"));
      return Unnamed(request.mapping_name);
    }
    const Module& module = (*modules_)[id];
    if (module.path == kVdso) {
      const ElfSymbols* symbols = Vdso(module);
      if (symbols == nullptr) return Unnamed(module.path);
      std::optional<SymbolMatch> match = symbols->LookupFileOffset(request.location.value);
      if (!match.has_value()) return Unnamed(module.path);
      return Named(module.path, std::move(match->function), match->offset);
    }
    if (absl::StartsWith(module.path, "[")) {
      return Unnamed(module.path);  // [vsyscall], [uprobes]: no file to read
    }
    ModuleSymbolizer* symbolizer = SymbolizerOf(id);
    if (symbolizer == nullptr) return Unnamed(module.path);
    Symbolization s;
    s.module = module.path;
    s.frames = symbolizer->Lookup(request.location.value);
    return s;
  }

  // Loads a module's symbols once: the file inside the target's root when it
  // is reachable, its debug file from every search root.
  ModuleSymbolizer* SymbolizerOf(uint32_t id) {
    auto [it, inserted] = module_symbolizers_.try_emplace(id);
    if (!inserted) return it->second.get();
    Module& module = (*modules_)[id];
    std::shared_ptr<base::RootDir> root =
        files_ == nullptr ? nullptr : files_->RootFor(module.example_pid);
    std::vector<DebugSearchRoot> roots;
    if (root != nullptr) roots.push_back({root, DebugSearchRoot::Kind::kSystem, "the target's root"});
    roots.insert(roots.end(), own_roots_.begin(), own_roots_.end());
    ModuleSymbolizerLimits limits;
    limits.dwarf.max_section_bytes = options_.max_dwarf_bytes;
    absl::StatusOr<SharedModule> loaded =
        options_.cache != nullptr ? options_.cache->LoadModule(module, root.get(), roots, limits)
                                  : LoadModule(module, root.get(), roots, limits);
    if (!loaded.ok()) {
      if (root == nullptr && module.build_id.empty()) {
        Warn(absl::StrCat("files of pid ", module.example_pid,
                          " are not available; its native frames stay unnamed"));
      } else {
        Warn(absl::StrCat("no symbols for ", module.path, ": ", loaded.status().message()));
      }
      return nullptr;
    }
    for (std::string& w : loaded->warnings) Warn(std::move(w));
    ModuleSymbolizer& symbolizer = *loaded->symbolizer;
    if (!symbolizer.build_id().empty()) module.build_id = symbolizer.build_id();
    if (!symbolizer.segments().empty()) module.segments = symbolizer.segments();
    if (symbolizer.has_dwarf() || !symbolizer.debug_file().empty()) module.debug_info = true;
    if (!symbolizer.debug_file().empty()) {
      Note(absl::StrCat(module.path, ": debug file ", symbolizer.debug_file()));
    }
    it->second = std::move(loaded->symbolizer);
    return it->second.get();
  }

  // The vdso is the kernel's, identical in every process of this boot, so the
  // profiler's own copy stands in for the target's (not for a 32-bit target,
  // whose vdso32 differs). Only when the target's files are reachable: that
  // is what says we run where the samples were taken. The kernel maps the
  // image from offset 0 (a special mapping's vm_pgoff), so a sample's file
  // offset is an offset into the image.
  const ElfSymbols* Vdso(const Module& module) {
    if (!vdso_loaded_) {
      if (RootFor(module.example_pid) == nullptr) return nullptr;
      vdso_loaded_ = true;
      absl::StatusOr<std::string> image = ReadOwnVdsoImage();
      absl::StatusOr<std::unique_ptr<ElfSymbols>> symbols =
          image.ok() ? ElfSymbols::FromImage(*image, kVdso)
                     : absl::StatusOr<std::unique_ptr<ElfSymbols>>(image.status());
      if (symbols.ok()) {
        vdso_ = std::move(*symbols);
      } else {
        Warn(absl::StrCat("no symbols for [vdso]: ", symbols.status().message()));
      }
    }
    return vdso_.get();
  }

  Symbolization ResolveProcess(const SymbolRequest& request) {
    std::optional<Symbolization> named = jit_->Resolve(request.location, request.mapping_name);
    if (named.has_value()) return std::move(*named);
    return Unnamed(request.mapping_name);
  }

  static absl::StatusOr<std::shared_ptr<const Kallsyms>> LoadKallsyms(const std::string& path) {
    absl::StatusOr<Kallsyms> loaded = Kallsyms::Load(path);
    if (!loaded.ok()) return loaded.status();
    return std::make_shared<const Kallsyms>(std::move(*loaded));
  }
  static absl::StatusOr<SharedModule> LoadModule(const Module& module, const base::RootDir* root,
                                                 const std::vector<DebugSearchRoot>& roots,
                                                 const ModuleSymbolizerLimits& limits) {
    absl::StatusOr<LoadedModule> loaded = LoadModuleSymbolizer(module, root, roots, limits);
    if (!loaded.ok()) return loaded.status();
    return SharedModule{std::move(loaded->symbolizer), std::move(loaded->warnings)};
  }

  const SymbolizerOptions options_;
  const ProcessFiles* const files_;
  std::vector<Module>* const modules_;
  // The profiler's root, the -symbols dirs, the debuginfod cache.
  std::vector<DebugSearchRoot> own_roots_;
  absl::flat_hash_map<uint32_t, bool> new_debug_file_;  // HasNewDebugFile's answers
  std::vector<std::string> notes_;

  bool kallsyms_loaded_ = false;
  std::shared_ptr<const Kallsyms> kallsyms_;
  bool vdso_loaded_ = false;
  std::unique_ptr<ElfSymbols> vdso_;
  // Loaded once per module / pid; a null value records a failed load.
  absl::flat_hash_map<uint32_t, std::shared_ptr<ModuleSymbolizer>> module_symbolizers_;
  JitSources* jit_;
  std::unique_ptr<TargetJitFiles> own_jit_files_;
  std::unique_ptr<JitSources> own_jit_;

  absl::flat_hash_set<std::string> warned_;
  std::vector<std::string> pending_warnings_;
};

Symbolizer::Symbolizer(SymbolizerOptions options, const ProcessFiles* files,
                       std::vector<Module>* modules, JitSources* jit)
    : impl_(std::make_unique<Impl>(options, files, modules, jit)),
      retry_unknown_native_(options.retry_unknown_native) {}

Symbolizer::~Symbolizer() = default;

void Symbolizer::Resolve(const std::vector<SymbolRequest>& requests, SymbolTable* table,
                         SymbolizeStats* stats) {
  absl::flat_hash_set<CodeLocation> retried;
  for (const SymbolRequest& request : requests) {
    if (const Symbolization* known = table->Find(request.location); known != nullptr) {
      // Named earlier (the snapshot), or a repeat; unknown native code is
      // looked up again when asked to, once.
      const bool retry = known->frames.empty() && request.location.kind == CodeKind::kNative &&
                         (retry_unknown_native_ || impl_->HasNewDebugFile(request.location.space)) &&
                         retried.insert(request.location).second;
      if (!retry) continue;
      ++stats->retried;
    }
    ++stats->looked_up;
    table->Insert(request.location, impl_->Resolve(request));
  }
  // What the table says now of each distinct location, however it was named.
  absl::flat_hash_set<CodeLocation> counted;
  for (const SymbolRequest& request : requests) {
    if (!counted.insert(request.location).second) continue;
    ++stats->requested;
    const Symbolization* s = table->Find(request.location);
    if (s != nullptr && !s->frames.empty()) {
      ++stats->resolved;
    } else {
      ++stats->unknown;
    }
  }
  impl_->FlushWarnings(&stats->warnings);
  impl_->FlushNotes(&stats->notes);
  stats->with_debug_info = impl_->modules_with_debug_info();
}

}  // namespace profcpu::symbolize
