#include "symbolize/dwarf_unwinder.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/unique_fd.h"
#include "symbolize/elf_file.h"
#include "symbolize/module_symbolizer.h"
#include "symbolize/vdso_image.h"

namespace profcpu::symbolize {
namespace {

// enum perf_event_x86_regs (arch/x86/include/uapi/asm/perf_regs.h).
constexpr int kPerfRegBp = 6;
constexpr int kPerfRegSp = 7;
constexpr int kPerfRegIp = 8;
// DWARF register number of rsp (psABI): a frame's rsp, which on x86-64 is
// its callee's canonical frame address.
constexpr unsigned kDwarfRegSp = 7;
// How many frames a leaf repair unwinds by CFI at most before giving up on
// meeting the frame-pointer chain (glibc's deepest frameless nesting on the
// way to a system call is three).
constexpr size_t kMaxRepairFrames = 16;
// The perf register holding each x86-64 DWARF register 0..16 (System V
// x86-64 psABI, "DWARF Register Number Mapping": rax rdx rcx rbx rsi rdi rbp
// rsp r8..r15, then 16 the return address, i.e. rip).
constexpr int kPerfRegOfDwarf[17] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};
// perf_event_attr.sample_regs_user bits every DWARF register above needs.
constexpr uint64_t kNeededRegs = 0xff01ffull;
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

// Where a file's PT_LOADs place it: enough to turn a mapping into a load
// bias and a module range for libdwfl (which puts a module's start at its
// first PT_LOAD's page-aligned p_vaddr, dwfl_module_getdwarf.c open_elf).
struct Layout {
  bool usable = false;
  bool exec = false;  // ET_EXEC: linked at its addresses, bias 0
  uint64_t first_vaddr = 0;
  uint64_t end_vaddr = 0;
  std::vector<LoadSegment> segments;
};

Layout ReadLayout(Elf* elf) {
  Layout layout;
  GElf_Ehdr ehdr;
  size_t count = 0;
  if (gelf_getehdr(elf, &ehdr) == nullptr || elf_getphdrnum(elf, &count) != 0 || count > 4096) {
    return layout;
  }
  layout.exec = ehdr.e_type == ET_EXEC;
  bool first = true;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) {
      continue;
    }
    if (first) {
      uint64_t align = phdr.p_align > 1 ? phdr.p_align : 1;
      layout.first_vaddr = phdr.p_vaddr & ~(align - 1);
      first = false;
    }
    layout.end_vaddr = std::max<uint64_t>(layout.end_vaddr, phdr.p_vaddr + phdr.p_memsz);
    layout.segments.push_back({phdr.p_offset, phdr.p_filesz, phdr.p_vaddr, (phdr.p_flags & PF_X) != 0});
  }
  layout.usable = !first && layout.end_vaddr > layout.first_vaddr;
  return layout;
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

class DwarfUnwinder::Impl {
 public:
  Impl(const ProcessFiles* files, DwarfUnwinderOptions options)
      : files_(files), options_(std::move(options)) {
    callbacks_.find_elf = &Impl::FindElf;
    callbacks_.find_debuginfo = &Impl::FindDebuginfo;
    callbacks_.section_address = dwfl_offline_section_address;
    thread_callbacks_.next_thread = &Impl::NextThread;
    thread_callbacks_.get_thread = &Impl::GetThread;
    thread_callbacks_.memory_read = &Impl::MemoryRead;
    thread_callbacks_.set_initial_registers = &Impl::SetInitialRegisters;
  }
  ~Impl() {
    for (auto& [pid, session] : sessions_) dwfl_end(session->dwfl);
  }

  UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                      const AddressSpaceTracker& spaces) {
    UnwoundStack out;
    if (sample.user_regs_abi == 0 || sample.user_regs.empty()) return out;  // a kernel thread
    ++stats_.stacks;
    std::optional<uint64_t> ip = UserRegister(sample, regs_mask, kPerfRegIp);
    std::optional<uint64_t> sp = UserRegister(sample, regs_mask, kPerfRegSp);
    if (!ip.has_value() || !sp.has_value()) {
      Warn("DWARF samples lack the instruction or stack pointer register; nothing to unwind");
      ++stats_.truncated;
      out.truncated = true;
      return out;
    }
    if ((regs_mask & kNeededRegs) != kNeededRegs) {
      Warn(absl::StrCat("DWARF samples carry registers 0x", absl::Hex(regs_mask),
                        " (x86-64 needs 0x", absl::Hex(kNeededRegs), "); unwinds may stop early"));
    }
    Session* session = files_ == nullptr || ArchElf() == nullptr ? nullptr : SessionFor(sample.pid);
    if (session == nullptr) {
      ++stats_.truncated;
      return {{*ip}, true};
    }
    Validate(session, sample.pid, spaces);
    if (session->dwfl == nullptr) {
      ++stats_.truncated;
      return {{*ip}, true};
    }
    current_ = Current{};
    current_.copy = StackCopyOf(sample, regs_mask);
    current_.sp = *sp;
    current_.spaces = &spaces;
    current_.session = session;
    int rc = dwfl_getthread_frames(session->dwfl, static_cast<pid_t>(sample.tid ? sample.tid : 1),
                                   &Impl::OnFrame, this);
    out.ips = std::move(current_.ips);
    if (out.ips.empty()) out.ips.push_back(*ip);
    // 0: the walk reached a frame without a return address (CFI marks
    // _start and thread starts so). libdw also ends quietly when a frame's
    // return address could not be read, which here means it lay past the
    // stack copy: that walk was cut short too.
    out.truncated = rc != 0 || current_.read_past_stack;
    if (out.truncated) {
      ++stats_.truncated;
      if (current_.frame_limit) ++stats_.frame_limit;
      if (current_.read_past_stack) ++stats_.stack_exhausted;
    }
    stats_.frames += out.ips.size();
    return out;
  }

  // See UserStackUnwinder::RepairLeaf. The kernel's chain is chain[0] = ip,
  // then the return addresses of the frame records from the sampled rbp (b0)
  // on: chain[1] was read from b0 + 8. Unwinding the leaf by CFI from the
  // copy, the first frame k whose rsp is b0 + 16 got its return address from
  // that same slot, so ips[0..k) are the frames the chain lacks, and the
  // chain goes on from chain[1]: nothing is duplicated or dropped.
  UnwoundStack RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                          const AddressSpaceTracker& spaces) {
    LeafRepairStats& stats = stats_.leaf;
    ++stats.samples;
    UnwoundStack unchanged{chain, false};
    if (chain.empty() || copy.regs_abi == 0 || copy.regs == nullptr) {
      ++stats.no_registers;
      return unchanged;
    }
    std::optional<uint64_t> ip = UserRegister(*copy.regs, copy.regs_mask, kPerfRegIp);
    std::optional<uint64_t> sp = UserRegister(*copy.regs, copy.regs_mask, kPerfRegSp);
    std::optional<uint64_t> bp = UserRegister(*copy.regs, copy.regs_mask, kPerfRegBp);
    if (!ip.has_value() || !sp.has_value() || !bp.has_value() || *ip != chain[0]) {
      ++stats.no_registers;
      return unchanged;
    }
    Session* session = files_ == nullptr || ArchElf() == nullptr ? nullptr : SessionFor(copy.pid);
    if (session != nullptr) Validate(session, copy.pid, spaces);
    if (session == nullptr || session->dwfl == nullptr) {
      ++stats.no_cfi;
      return unchanged;
    }
    current_ = Current{};
    current_.copy = copy;
    current_.sp = *sp;
    current_.spaces = &spaces;
    current_.session = session;
    current_.repair = true;
    current_.max_frames = kMaxRepairFrames;
    if (chain.size() >= 2) {
      current_.splice_rsp = *bp + 16;
      current_.splice_return = chain[1];
    }
    dwfl_getthread_frames(session->dwfl, static_cast<pid_t>(copy.tid ? copy.tid : 1),
                          &Impl::OnFrame, this);
    std::vector<uint64_t>& ips = current_.ips;
    if (current_.splice_at > 0) {
      const size_t k = current_.splice_at;
      if (k == 1) {
        ++stats.unchanged;
        return unchanged;
      }
      // Never invent a frame: each one recovered must be code of the process.
      for (size_t i = 1; i < k; ++i) {
        if (!spaces.FindMapping(copy.pid, ips[i] - 1).has_value()) {
          ++stats.outside_mappings;
          return unchanged;
        }
      }
      UnwoundStack out;
      out.ips.assign(ips.begin(), ips.begin() + static_cast<std::ptrdiff_t>(k));
      out.ips.insert(out.ips.end(), chain.begin() + 1, chain.end());
      ++stats.repaired;
      stats.frames_added += k - 1;
      return out;
    }
    if (current_.splice_mismatch) {
      ++stats.mismatch;
      return unchanged;
    }
    if (chain.size() == 1 && ips.size() > 1) {
      // The kernel found no frame record at all (rbp 0 or not a stack
      // address): what CFI recovered is more than it had, if not the whole
      // stack.
      ++stats.cfi_only;
      stats.frames_added += ips.size() - 1;
      return {std::move(ips), true};
    }
    ++stats.no_splice;
    return unchanged;
  }

  const DwarfUnwindStats& stats() const { return stats_; }
  void TakeWarnings(std::vector<std::string>* out) {
    for (std::string& w : warnings_) out->push_back(std::move(w));
    warnings_.clear();
  }

 private:
  // A file libdwfl may ask for (its module userdata).
  struct ModuleFile {
    Impl* impl = nullptr;
    uint32_t pid = 0;
    Module module;
  };
  struct Reported {
    uint64_t end = 0;
    int64_t module = -1;
    uint64_t bias = 0;
    uint64_t probe = 0;  // an address it was reported for, to check it later
  };
  struct Session {
    Dwfl* dwfl = nullptr;
    uint32_t pid = 0;
    uint64_t last_used = 0;
    uint64_t generation = 0;  // of the process's mappings when last checked
    std::map<uint64_t, Reported> reported;  // by module start address
    absl::flat_hash_map<int64_t, Layout> layouts;
    std::vector<std::unique_ptr<ModuleFile>> files;
  };
  // The sample being unwound, as the callbacks see it.
  struct Current {
    UserStackCopy copy;
    uint64_t sp = 0;
    const AddressSpaceTracker* spaces = nullptr;
    Session* session = nullptr;
    std::vector<uint64_t> ips;
    bool read_past_stack = false;
    bool frame_limit = false;
    size_t max_frames = 0;  // 0: the options' max_frames
    // A leaf repair: stop at the frame whose rsp is splice_rsp (0: no
    // chain to meet) and check it returns to splice_return.
    bool repair = false;
    uint64_t splice_rsp = 0;
    uint64_t splice_return = 0;
    size_t splice_at = 0;  // the frame where the chain was met; 0: not met
    bool splice_mismatch = false;
  };

  void Warn(std::string warning) {
    if (warned_.insert(warning).second) warnings_.push_back(std::move(warning));
  }

  Session* SessionFor(uint32_t pid) {
    ++clock_;
    auto it = sessions_.find(pid);
    if (it != sessions_.end()) {
      it->second->last_used = clock_;
      return it->second.get();
    }
    if (sessions_.size() >= options_.max_sessions) {
      auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](const auto& a, const auto& b) {
        return a.second->last_used < b.second->last_used;
      });
      dwfl_end(oldest->second->dwfl);
      sessions_.erase(oldest);
    }
    auto session = std::make_unique<Session>();
    session->pid = pid;
    session->last_used = clock_;
    if (!Begin(session.get())) return nullptr;
    Session* raw = session.get();
    sessions_.emplace(pid, std::move(session));
    return raw;
  }

  bool Begin(Session* session) {
    session->dwfl = dwfl_begin(&callbacks_);
    if (session->dwfl == nullptr ||
        !dwfl_attach_state(session->dwfl, ArchElf(), static_cast<pid_t>(session->pid),
                           &thread_callbacks_, this)) {
      Warn(absl::StrCat("libdwfl cannot unwind: ", dwfl_errmsg(-1)));
      if (session->dwfl != nullptr) dwfl_end(session->dwfl);
      session->dwfl = nullptr;
      return false;
    }
    return true;
  }

  // A mapping changed under the session (dlclose then dlopen at the same
  // place): start a fresh one, as libdwfl cannot forget a module.
  void Reset(Session* session) {
    ++stats_.session_resets;
    dwfl_end(session->dwfl);
    session->reported.clear();
    session->files.clear();
    Begin(session);
  }

  // Where the process's module `id` mapped at `mapping` sits: its bias and
  // [low, high), from the file's layout (read once per session).
  struct Placement {
    uint64_t bias = 0;
    uint64_t low = 0;
    uint64_t high = 0;
  };
  std::optional<Placement> Place(Session* session, const MappingView& mapping,
                                 const Module& module) {
    auto [layout_it, fresh] = session->layouts.try_emplace(mapping.module);
    if (fresh) {
      auto [elf, fd] = OpenModule(module, session->pid);
      if (elf != nullptr) {
        layout_it->second = ReadLayout(elf);
        elf_end(elf);
      }
      if (fd >= 0) ::close(fd);
    }
    const Layout& layout = layout_it->second;
    if (!layout.usable) return std::nullopt;
    std::optional<uint64_t> vaddr = FileOffsetToAddress(layout.segments, mapping.file_offset);
    if (!vaddr.has_value()) return std::nullopt;
    const uint64_t bias = layout.exec ? 0 : mapping.start - *vaddr;
    return Placement{bias, bias + layout.first_vaddr, bias + layout.end_vaddr};
  }

  // Before a sample: if the process's mappings changed since the session
  // last looked, check that every module it reported is still where it was
  // (dlclose then dlopen at the same place moves things); if not, start a
  // fresh session, as libdwfl cannot forget a module. Never done during an
  // unwind, which iterates the session.
  void Validate(Session* session, uint32_t pid, const AddressSpaceTracker& spaces) {
    const uint64_t generation = spaces.Generation(pid);
    if (generation == session->generation) return;
    session->generation = generation;
    for (const auto& [low, r] : session->reported) {
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

  std::shared_ptr<base::RootDir> RootOf(const Module& module, uint32_t pid) const {
    std::shared_ptr<base::RootDir> root = files_->RootFor(pid);
    return root != nullptr ? root : files_->RootFor(module.example_pid);
  }

  // Opens a module's file: the vdso from our own image, anything else inside
  // the process's root. Returns the Elf (ELF_C_READ) and its fd (-1 for the vdso).
  std::pair<Elf*, int> OpenModule(const Module& module, uint32_t pid) {
    if (module.path == "[vdso]") {
      if (!vdso_loaded_) {
        vdso_loaded_ = true;
        absl::StatusOr<std::string> image = ReadOwnVdsoImage();
        if (image.ok()) vdso_image_ = std::move(*image);
      }
      if (vdso_image_.empty()) return {nullptr, -1};
      return {elf_memory(vdso_image_.data(), vdso_image_.size()), -1};
    }
    if (module.path.empty() || module.path[0] == '[') return {nullptr, -1};
    std::shared_ptr<base::RootDir> root = RootOf(module, pid);
    if (root == nullptr) return {nullptr, -1};
    std::string path(absl::StripSuffix(module.path, kDeletedSuffix));
    absl::StatusOr<base::UniqueFd> fd = root->OpenFile(path);
    struct stat st;
    if (!fd.ok() || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      Warn(absl::StrCat("cannot open ", path, " to unwind through it: ",
                        fd.ok() ? "not a regular file" : fd.status().message()));
      return {nullptr, -1};
    }
    Elf* elf = elf_begin(fd->get(), ELF_C_READ, nullptr);
    if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
      if (elf != nullptr) elf_end(elf);
      return {nullptr, -1};
    }
    return {elf, fd->Release()};
  }

  // Reports the module holding `pc` to the session, if it is file-backed and
  // not reported yet. JIT and anonymous code is left to libdw's
  // frame-pointer fallback.
  void Report(uint64_t pc) {
    Session* session = current_.session;
    std::optional<MappingView> mapping = current_.spaces->FindMapping(session->pid, pc);
    if (!mapping.has_value() || mapping->module < 0) return;
    const std::vector<Module>& modules = current_.spaces->modules();
    if (static_cast<size_t>(mapping->module) >= modules.size()) return;
    const Module& module = modules[static_cast<size_t>(mapping->module)];

    std::optional<Placement> place = Place(session, *mapping, module);
    if (!place.has_value()) return;
    // Already there (the usual case). Anything overlapping it is left alone
    // during an unwind (Validate settles changes between samples).
    auto next = session->reported.upper_bound(place->low);
    if (next != session->reported.end() && next->first < place->high) return;
    if (next != session->reported.begin() && std::prev(next)->second.end > place->low) return;
    auto file = std::make_unique<ModuleFile>();
    file->impl = this;
    file->pid = session->pid;
    file->module = module;
    dwfl_report_begin_add(session->dwfl);
    Dwfl_Module* reported =
        dwfl_report_module(session->dwfl, module.path.c_str(), place->low, place->high);
    if (reported != nullptr) {
      void** userdata = nullptr;
      dwfl_module_info(reported, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
      if (userdata != nullptr) *userdata = file.get();
    }
    dwfl_report_end(session->dwfl, nullptr, nullptr);
    session->reported[place->low] = {place->high, mapping->module, place->bias, pc};
    session->files.push_back(std::move(file));
  }

  // Dwfl_Callbacks.find_elf: the module's file, read with ELF_C_READ.
  static int FindElf(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, char**, Elf** elfp) {
    auto* file = static_cast<ModuleFile*>(*userdata);
    if (file == nullptr) return -1;
    auto [elf, fd] = file->impl->OpenModule(file->module, file->pid);
    *elfp = elf;
    return fd;
  }

  // Dwfl_Callbacks.find_debuginfo: a separate debug file (for .debug_frame),
  // found and verified as the symbolizer does, handed over as a private copy.
  static int FindDebuginfo(Dwfl_Module* mod, void** userdata, const char*, Dwarf_Addr, const char*,
                           const char* debuglink_file, GElf_Word debuglink_crc, char**) {
    auto* file = static_cast<ModuleFile*>(*userdata);
    if (file == nullptr) return -1;
    Impl* impl = file->impl;
    DebugFileQuery query;
    query.module_path = std::string(absl::StripSuffix(file->module.path, kDeletedSuffix));
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr;
    int length = dwfl_module_build_id(mod, &bits, &vaddr);
    if (length > 0) query.build_id.assign(reinterpret_cast<const char*>(bits), static_cast<size_t>(length));
    if (debuglink_file != nullptr && std::strchr(debuglink_file, '/') == nullptr) {
      query.debug_link = DebugLink{debuglink_file, debuglink_crc};
    }
    std::vector<DebugSearchRoot> roots;
    if (std::shared_ptr<base::RootDir> root = impl->RootOf(file->module, file->pid)) {
      roots.push_back({root, DebugSearchRoot::Kind::kSystem, "the target's root"});
    }
    roots.insert(roots.end(), impl->options_.debug_roots.begin(), impl->options_.debug_roots.end());
    std::vector<std::string> ignored;
    absl::StatusOr<FoundDebugFile> found = FindDebugFile(query, roots, {}, &ignored);
    if (!found.ok()) return -1;
    return PrivateCopy(found->fd.get(), kMaxDebugCopyBytes).Release();
  }

  static pid_t NextThread(Dwfl*, void*, void**) { return 0; }
  static bool GetThread(Dwfl*, pid_t, void* dwfl_arg, void** thread_argp) {
    *thread_argp = dwfl_arg;
    return true;
  }

  // Memory is the sample's stack copy, [sp, sp + size): nothing else of the
  // process was recorded.
  static bool MemoryRead(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* dwfl_arg) {
    Current& c = static_cast<Impl*>(dwfl_arg)->current_;
    const absl::string_view stack = c.copy.stack;
    if (address >= c.sp && address - c.sp <= stack.size() &&
        stack.size() - (address - c.sp) >= sizeof(Dwarf_Word)) {
      std::memcpy(result, stack.data() + (address - c.sp), sizeof(Dwarf_Word));
      return true;
    }
    if (address >= c.sp) c.read_past_stack = true;
    return false;
  }

  static bool SetInitialRegisters(Dwfl_Thread* thread, void* thread_arg) {
    Current& c = static_cast<Impl*>(thread_arg)->current_;
    Dwarf_Word regs[17];
    for (int i = 0; i < 17; ++i) {
      regs[i] = UserRegister(*c.copy.regs, c.copy.regs_mask, kPerfRegOfDwarf[i]).value_or(0);
    }
    if (!dwfl_thread_state_registers(thread, 0, 17, regs)) return false;
    dwfl_thread_state_register_pc(thread, regs[16]);
    return true;
  }

  static int OnFrame(Dwfl_Frame* frame, void* arg) {
    Impl* impl = static_cast<Impl*>(arg);
    Current& c = impl->current_;
    // Not dwfl_frame_pc's `isactivation`: asking for it unwinds this frame at
    // once, before the module its code is in could be reported.
    Dwarf_Addr pc;
    if (!dwfl_frame_pc(frame, &pc, nullptr)) return DWARF_CB_ABORT;
    const bool first = c.ips.empty();
    if (c.repair && !first && c.splice_rsp != 0) {
      Dwarf_Word rsp = 0;
      if (dwfl_frame_reg(frame, kDwarfRegSp, &rsp) != 0) return DWARF_CB_ABORT;
      if (rsp == c.splice_rsp) {
        // This frame's return address came from the slot the kernel read.
        if (pc == c.splice_return) {
          c.splice_at = c.ips.size();
        } else {
          c.splice_mismatch = true;
        }
        return DWARF_CB_ABORT;
      }
      if (rsp > c.splice_rsp) return DWARF_CB_ABORT;  // passed it: no meeting
    }
    c.ips.push_back(pc);
    const size_t max_frames = c.max_frames > 0 ? c.max_frames : impl->options_.max_frames;
    if (c.ips.size() >= max_frames) {
      c.frame_limit = true;
      return DWARF_CB_ABORT;
    }
    // libdw unwinds a caller's frame from its call instruction (pc - 1).
    impl->Report(first || pc == 0 ? pc : pc - 1);
    return DWARF_CB_OK;
  }

  const ProcessFiles* files_;
  DwarfUnwinderOptions options_;
  Dwfl_Callbacks callbacks_ = {};
  Dwfl_Thread_Callbacks thread_callbacks_ = {};
  absl::flat_hash_map<uint32_t, std::unique_ptr<Session>> sessions_;
  uint64_t clock_ = 0;
  Current current_;
  bool vdso_loaded_ = false;
  std::string vdso_image_;
  DwarfUnwindStats stats_;
  absl::flat_hash_set<std::string> warned_;
  std::vector<std::string> warnings_;
};

DwarfUnwinder::DwarfUnwinder(const ProcessFiles* files, DwarfUnwinderOptions options)
    : impl_(std::make_unique<Impl>(files, std::move(options))) {}
DwarfUnwinder::~DwarfUnwinder() = default;

UnwoundStack DwarfUnwinder::Unwind(const recording::Sample& sample, uint64_t regs_mask,
                                   const AddressSpaceTracker& spaces) {
  return impl_->Unwind(sample, regs_mask, spaces);
}
UnwoundStack DwarfUnwinder::RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                                       const AddressSpaceTracker& spaces) {
  return impl_->RepairLeaf(copy, chain, spaces);
}
const DwarfUnwindStats& DwarfUnwinder::stats() const { return impl_->stats(); }
void DwarfUnwinder::TakeWarnings(std::vector<std::string>* out) { impl_->TakeWarnings(out); }

}  // namespace profcpu::symbolize
