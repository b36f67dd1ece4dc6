#include "symbolize/dwfl_sessions.h"

#include <elf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/unique_fd.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/module_symbolizer.h"

namespace profcpu::symbolize {
namespace {

constexpr uint64_t kMaxDebugCopyBytes = uint64_t{1} << 30;

// libdwfl picks its architecture backend from an ELF header; JIT-only stacks
// report no module before the first frame, so attach with a synthetic
// x86-64 header that lives for the whole process.
Elf* ArchElf() {
  static Elf64_Ehdr header = [] {
    Elf64_Ehdr h = {};
    std::memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_ident[EI_DATA] = ELFDATA2LSB;
    h.e_ident[EI_VERSION] = EV_CURRENT;
    h.e_type = ET_EXEC;
    h.e_machine = EM_X86_64;
    h.e_version = EV_CURRENT;
    h.e_ehsize = sizeof(Elf64_Ehdr);
    return h;
  }();
  static Elf* elf = LibelfReady() ? elf_memory(reinterpret_cast<char*>(&header), sizeof(header))
                                  : nullptr;
  return elf;
}

// A private, unlinked in-memory copy of `fd`: libdwfl mmaps separate debug
// files, and a copy cannot be truncated under us by the target (SIGBUS).
base::UniqueFd PrivateCopy(int fd, uint64_t limit) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) > limit) return base::UniqueFd();
  base::UniqueFd copy(::memfd_create("profcpu-debug", MFD_CLOEXEC));
  if (!copy.valid()) return copy;
  std::string buffer(1 << 16, '\0');
  off_t offset = 0;
  while (true) {
    ssize_t n = ::pread(fd, buffer.data(), buffer.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (::write(copy.get(), buffer.data(), static_cast<size_t>(n)) != n) return base::UniqueFd();
    offset += n;
    if (static_cast<uint64_t>(offset) > limit) return base::UniqueFd();
  }
  return copy;
}

}  // namespace

DwflSessions::DwflSessions(const ProcessFiles* files, Options options,
                           const Dwfl_Thread_Callbacks* thread_callbacks, void* thread_arg,
                           Warn warn)
    : files_(files),
      options_(std::move(options)),
      thread_callbacks_(thread_callbacks),
      thread_arg_(thread_arg),
      warn_(std::move(warn)),
      module_files_(files, warn_) {
  callbacks_.find_elf = &DwflSessions::FindElf;
  callbacks_.find_debuginfo = &DwflSessions::FindDebuginfo;
  callbacks_.section_address = dwfl_offline_section_address;
}

DwflSessions::~DwflSessions() = default;

DwflSessions::Session* DwflSessions::Ready(uint32_t pid, const AddressSpaceTracker& spaces) {
  Session* session = files_ == nullptr || ArchElf() == nullptr ? nullptr : SessionFor(pid);
  if (session == nullptr) return nullptr;
  Validate(session, pid, spaces);
  return session->dwfl_ != nullptr ? session : nullptr;
}

DwflSessions::Session* DwflSessions::SessionFor(uint32_t pid) {
  ++clock_;
  auto it = sessions_.find(pid);
  if (it != sessions_.end()) {
    it->second->last_used_ = clock_;
    return it->second.get();
  }
  if (sessions_.size() >= options_.max_sessions) {
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](const auto& a, const auto& b) {
      return a.second->last_used_ < b.second->last_used_;
    });
    sessions_.erase(oldest);
  }
  auto session = std::make_unique<Session>();
  session->pid_ = pid;
  session->last_used_ = clock_;
  if (!Begin(session.get())) return nullptr;
  Session* raw = session.get();
  sessions_.emplace(pid, std::move(session));
  return raw;
}

bool DwflSessions::Begin(Session* session) {
  session->dwfl_.reset(dwfl_begin(&callbacks_));
  if (session->dwfl_ == nullptr ||
      !dwfl_attach_state(session->dwfl(), ArchElf(), static_cast<pid_t>(session->pid_),
                         thread_callbacks_, thread_arg_)) {
    warn_(absl::StrCat("libdwfl cannot unwind: ", dwfl_errmsg(-1)));
    session->dwfl_.reset();
    return false;
  }
  return true;
}

// A mapping changed under the session (dlclose then dlopen at the same
// place): start a fresh one, as libdwfl cannot forget a module.
void DwflSessions::Reset(Session* session) {
  ++resets_;
  session->dwfl_.reset();
  session->reported_.clear();
  session->files_.clear();
  Begin(session);
}

// Where the process's module mapped at `mapping` sits, from the file's
// layout (read once per session).
std::optional<DwflSessions::Placement> DwflSessions::Place(Session* session,
                                                           const MappingView& mapping,
                                                           const Module& module) {
  auto [layout_it, fresh] = session->layouts_.try_emplace(mapping.module);
  if (fresh) {
    absl::StatusOr<ElfFile> file = module_files_.Open(module, session->pid_);
    if (file.ok()) layout_it->second = ReadLoadLayout(file->get());
  }
  const LoadLayout& layout = layout_it->second;
  if (!layout.usable) return std::nullopt;
  std::optional<uint64_t> vaddr = FileOffsetToAddress(layout.segments, mapping.file_offset);
  if (!vaddr.has_value()) return std::nullopt;
  const uint64_t bias = layout.exec ? 0 : mapping.start - *vaddr;
  return Placement{bias, bias + layout.first_vaddr, bias + layout.end_vaddr};
}

// Before a sample: if the process's mappings changed since the session last
// looked, check that every module it reported is still where it was
// (dlclose then dlopen at the same place moves things); if not, start a
// fresh session.
void DwflSessions::Validate(Session* session, uint32_t pid, const AddressSpaceTracker& spaces) {
  const uint64_t generation = spaces.Generation(pid);
  if (generation == session->generation_) return;
  session->generation_ = generation;
  for (const auto& [low, r] : session->reported_) {
    std::optional<MappingView> now = spaces.FindMapping(pid, r.probe);
    bool same = now.has_value() && now->module == r.module;
    if (same) {
      std::optional<Placement> p =
          Place(session, *now, spaces.modules()[static_cast<size_t>(r.module)]);
      same = p.has_value() && p->bias == r.bias;
    }
    if (!same) {
      Reset(session);
      return;
    }
  }
}

void DwflSessions::Report(Session* session, const AddressSpaceTracker& spaces, uint64_t pc) {
  std::optional<MappingView> mapping = spaces.FindMapping(session->pid_, pc);
  if (!mapping.has_value() || mapping->module < 0) return;
  const std::vector<Module>& modules = spaces.modules();
  if (static_cast<size_t>(mapping->module) >= modules.size()) return;
  const Module& module = modules[static_cast<size_t>(mapping->module)];

  std::optional<Placement> place = Place(session, *mapping, module);
  if (!place.has_value()) return;
  // Already there (the usual case). Anything overlapping it is left alone
  // during an unwind (Validate settles changes between samples).
  auto next = session->reported_.upper_bound(place->low);
  if (next != session->reported_.end() && next->first < place->high) return;
  if (next != session->reported_.begin() && std::prev(next)->second.end > place->low) return;
  auto file = std::make_unique<ModuleFile>();
  file->sessions = this;
  file->pid = session->pid_;
  file->module = module;
  dwfl_report_begin_add(session->dwfl());
  Dwfl_Module* reported =
      dwfl_report_module(session->dwfl(), module.path.c_str(), place->low, place->high);
  if (reported != nullptr) {
    void** userdata = nullptr;
    dwfl_module_info(reported, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (userdata != nullptr) *userdata = file.get();
  }
  dwfl_report_end(session->dwfl(), nullptr, nullptr);
  session->reported_[place->low] = {place->high, mapping->module, place->bias, pc};
  session->files_.push_back(std::move(file));
}

// The module's file, read with ELF_C_READ; libdwfl takes over the Elf and
// the fd returned.
int DwflSessions::FindElf(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, char**,
                          Elf** elfp) {
  auto* file = static_cast<ModuleFile*>(*userdata);
  if (file == nullptr) return -1;
  absl::StatusOr<ElfFile> opened = file->sessions->module_files_.Open(file->module, file->pid);
  if (!opened.ok()) {
    *elfp = nullptr;
    return -1;
  }
  ElfFile::Released released = std::move(*opened).Release();
  *elfp = released.elf;
  return released.fd;
}

// A separate debug file (for .debug_frame), found and verified as the
// symbolizer does, handed over as a private copy (libdwfl closes it).
int DwflSessions::FindDebuginfo(Dwfl_Module* mod, void** userdata, const char*, Dwarf_Addr,
                                const char*, const char* debuglink_file,
                                GElf_Word debuglink_crc, char**) {
  auto* file = static_cast<ModuleFile*>(*userdata);
  if (file == nullptr) return -1;
  DwflSessions* sessions = file->sessions;
  DebugFileQuery query;
  query.module_path = std::string(absl::StripSuffix(file->module.path, kDeletedSuffix));
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr;
  int length = dwfl_module_build_id(mod, &bits, &vaddr);
  if (length > 0) {
    query.build_id.assign(reinterpret_cast<const char*>(bits), static_cast<size_t>(length));
  }
  if (debuglink_file != nullptr && std::strchr(debuglink_file, '/') == nullptr) {
    query.debug_link = DebugLink{debuglink_file, debuglink_crc};
  }
  std::vector<DebugSearchRoot> roots;
  if (std::shared_ptr<base::RootDir> root = sessions->module_files_.RootOf(file->module, file->pid)) {
    roots.push_back({root, DebugSearchRoot::Kind::kSystem, "the target's root"});
  }
  roots.insert(roots.end(), sessions->options_.debug_roots.begin(),
               sessions->options_.debug_roots.end());
  std::vector<std::string> ignored;
  absl::StatusOr<FoundDebugFile> found = FindDebugFile(query, roots, {}, &ignored);
  if (!found.ok()) return -1;
  return PrivateCopy(found->fd.get(), kMaxDebugCopyBytes).Release();
}

}  // namespace profcpu::symbolize
