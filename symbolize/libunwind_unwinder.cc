#include "symbolize/libunwind_unwinder.h"

#include <libunwind.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <type_traits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "symbolize/cfi_unwinder_files.h"
#include "symbolize/eh_frame_table.h"
#include "symbolize/elf_file.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/load_layout.h"

// Exported by libunwind-x86_64 but declared by no installed header (perf
// declares it so too): the binary search of an .eh_frame_hdr table, reading
// the table and the FDEs through the address space's access_mem.
extern "C" int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                                  unw_dyn_info_t* di, unw_proc_info_t* pi,
                                                  int need_unwind_info, void* arg);

namespace profcpu::symbolize {
namespace {

// A file's CFI and layout, read once per module (shared by the processes
// that map it).
struct ModuleCfi {
  LoadLayout layout;
  std::optional<EhFrameTable> table;  // none: no .eh_frame_hdr (frame-pointer fallback)
};

// A module's CFI placed in the process being unwound: its load bias.
struct Placed {
  uint64_t bias = 0;
  const ModuleCfi* cfi = nullptr;
};

struct AddressSpaceEnder {
  void operator()(unw_addr_space_t as) const { unw_destroy_addr_space(as); }
};
using AddressSpacePtr = std::unique_ptr<std::remove_pointer_t<unw_addr_space_t>, AddressSpaceEnder>;

}  // namespace

class LibunwindUnwinder::Impl {
 public:
  Impl(const ProcessFiles* files, size_t max_sessions, std::function<void(std::string)> warn)
      : files_(files),
        max_sessions_(std::max<size_t>(1, max_sessions)),
        warn_(std::move(warn)),
        module_files_(files, warn_) {
    accessors_.find_proc_info = &Impl::FindProcInfo;
    accessors_.put_unwind_info = &Impl::PutUnwindInfo;
    accessors_.get_dyn_info_list_addr = &Impl::GetDynInfoListAddr;
    accessors_.access_mem = &Impl::AccessMem;
    accessors_.access_reg = &Impl::AccessReg;
    accessors_.access_fpreg = &Impl::AccessFpreg;
    accessors_.resume = &Impl::Resume;
    accessors_.get_proc_name = &Impl::GetProcName;
  }

  WalkEnd Walk(CfiWalk* walk) {
    Space* space = SpaceFor(walk->copy.pid, *walk->spaces);
    if (space == nullptr) return WalkEnd::kNoSession;
    walk_ = walk;
    placed_ = &space->placed;
    WalkEnd end = Step(space->as.get(), walk);
    walk_ = nullptr;
    placed_ = nullptr;
    return end;
  }

 private:
  struct Space {
    AddressSpacePtr as;
    uint64_t generation = 0;
    uint64_t last_used = 0;
    // The modules whose CFI libunwind has looked up in this process since
    // its mappings last changed. Kept as long as libunwind's cache is: a
    // cached IP's rules skip find_proc_info, yet a CFA expression's bytes
    // are still read from .eh_frame.
    std::vector<Placed> placed;
  };

  WalkEnd Step(unw_addr_space_t as, CfiWalk* walk) {
    unw_cursor_t cursor;
    // `this` is the accessors' `arg` for the whole walk.
    if (unw_init_remote(&cursor, as, this) < 0) return WalkEnd::kStopped;
    while (true) {
      unw_word_t pc = 0;
      unw_word_t rsp = 0;
      if (unw_get_reg(&cursor, UNW_REG_IP, &pc) < 0) return WalkEnd::kStopped;
      if (walk->WantsRsp() && unw_get_reg(&cursor, UNW_REG_SP, &rsp) < 0) return WalkEnd::kStopped;
      if (!walk->OnFrame(pc, rsp)) return WalkEnd::kStopped;
      const int stepped = unw_step(&cursor);
      // 0: a frame without a caller (CFI leaves _start's return address
      // undefined, the fallback met rbp 0).
      if (stepped == 0) return WalkEnd::kOutermost;
      if (stepped < 0) return WalkEnd::kStopped;
    }
  }

  // The process's address space, its caches flushed when its mappings
  // changed (libunwind caches each IP's register rules). Capped like
  // libdwfl's sessions, least recently used first out.
  Space* SpaceFor(uint32_t pid, const AddressSpaceTracker& spaces) {
    if (files_ == nullptr) return nullptr;
    ++clock_;
    auto it = spaces_.find(pid);
    if (it == spaces_.end()) {
      if (spaces_.size() >= max_sessions_) {
        auto oldest = std::min_element(spaces_.begin(), spaces_.end(), [](const auto& a, const auto& b) {
          return a.second.last_used < b.second.last_used;
        });
        spaces_.erase(oldest);
      }
      AddressSpacePtr as(unw_create_addr_space(&accessors_, 0));
      if (as == nullptr) {
        warn_("libunwind cannot create an address space");
        return nullptr;
      }
      unw_set_caching_policy(as.get(), UNW_CACHE_GLOBAL);
      it = spaces_.emplace(pid, Space{std::move(as), spaces.Generation(pid), 0, {}}).first;
    }
    Space& space = it->second;
    space.last_used = clock_;
    const uint64_t generation = spaces.Generation(pid);
    if (generation != space.generation) {
      unw_flush_cache(space.as.get(), 0, 0);
      space.placed.clear();
      space.generation = generation;
    }
    return &space;
  }

  const ModuleCfi& CfiOf(int64_t module_index, uint32_t pid, const AddressSpaceTracker& spaces) {
    auto [it, fresh] = modules_.try_emplace(module_index);
    if (fresh) {
      it->second = std::make_unique<ModuleCfi>();
      const Module& module = spaces.modules()[static_cast<size_t>(module_index)];
      absl::StatusOr<ElfFile> file = module_files_.Open(module, pid);
      if (file.ok()) {
        it->second->layout = ReadLoadLayout(file->get());
        absl::StatusOr<EhFrameTable> table = ReadEhFrameTable(*file);
        if (table.ok()) {
          it->second->table = std::move(*table);
        } else if (!absl::IsNotFound(table.status()) || module.path != "[vdso]") {
          warn_(absl::StrCat(module.path, ": ", table.status().message(),
                             "; libunwind walks its code by frame pointers"));
        }
      }
    }
    return *it->second;
  }

  // unw_accessors_t, whose `arg` is the Impl (unw_init_remote's); the walk
  // under way is its walk_.

  static int FindProcInfo(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi,
                          int need_unwind_info, void* arg) {
    Impl* self = static_cast<Impl*>(arg);
    if (self == nullptr || self->walk_ == nullptr || self->placed_ == nullptr) return -UNW_EINVAL;
    const CfiWalk& walk = *self->walk_;
    std::optional<MappingView> mapping = walk.spaces->FindMapping(walk.copy.pid, ip);
    if (!mapping.has_value() || mapping->module < 0 ||
        static_cast<size_t>(mapping->module) >= walk.spaces->modules().size()) {
      return -UNW_ENOINFO;
    }
    const ModuleCfi& cfi = self->CfiOf(mapping->module, walk.copy.pid, *walk.spaces);
    if (!cfi.table.has_value() || !cfi.layout.usable) return -UNW_ENOINFO;
    std::optional<uint64_t> vaddr = FileOffsetToAddress(cfi.layout.segments, mapping->file_offset);
    if (!vaddr.has_value()) return -UNW_ENOINFO;
    const uint64_t bias = cfi.layout.exec ? 0 : mapping->start - *vaddr;
    bool placed = false;
    for (const Placed& p : *self->placed_) placed = placed || (p.cfi == &cfi && p.bias == bias);
    if (!placed) self->placed_->push_back({bias, &cfi});

    unw_dyn_info_t di = {};
    di.start_ip = bias + cfi.layout.first_vaddr;
    di.end_ip = bias + cfi.layout.end_vaddr;
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.u.rti.name_ptr = 0;
    di.u.rti.segbase = bias + cfi.table->hdr_address;
    di.u.rti.table_data = bias + cfi.table->table_address;
    // In words: each entry is two 4-byte offsets, one unw_word_t.
    di.u.rti.table_len = cfi.table->fde_count * 8 / sizeof(unw_word_t);
    return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
  }

  static void PutUnwindInfo(unw_addr_space_t, unw_proc_info_t*, void*) {}

  static int GetDynInfoListAddr(unw_addr_space_t, unw_word_t*, void*) { return -UNW_ENOINFO; }

  // The stack copy, else the .eh_frame_hdr and .eh_frame of the modules
  // met in this process; nothing else of the process was recorded.
  static int AccessMem(unw_addr_space_t, unw_word_t address, unw_word_t* value, int write,
                       void* arg) {
    Impl* self = static_cast<Impl*>(arg);
    if (self == nullptr || self->walk_ == nullptr || self->placed_ == nullptr || write) {
      return -UNW_EINVAL;
    }
    CfiWalk& walk = *self->walk_;
    if (address < walk.sp || address - walk.sp >= walk.copy.stack.size()) {
      for (const Placed& p : *self->placed_) {
        uint64_t word = 0;
        if (address >= p.bias && p.cfi->table->Read(address - p.bias, &word)) {
          *value = word;
          return 0;
        }
      }
      // Elsewhere in a module: a C++ CIE's personality routine, which the
      // CIE names indirectly (DW_EH_PE_indirect, through a word in the
      // module's data) and libunwind reads while parsing it. Exceptions
      // need it, unwinding does not, and the module's data was not
      // recorded: any value does.
      for (const Placed& p : *self->placed_) {
        if (address >= p.bias + p.cfi->layout.first_vaddr &&
            address < p.bias + p.cfi->layout.end_vaddr) {
          *value = 0;
          return 0;
        }
      }
    }
    uint64_t word = 0;
    if (!walk.ReadStack(address, &word)) return -UNW_EINVAL;
    *value = word;
    return 0;
  }

  static int AccessReg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* value, int write,
                       void* arg) {
    Impl* self = static_cast<Impl*>(arg);
    if (self == nullptr || self->walk_ == nullptr || write || reg < 0 || reg > 16) {
      return -UNW_EBADREG;
    }
    const CfiWalk& walk = *self->walk_;
    *value = UserRegister(*walk.copy.regs, walk.copy.regs_mask, kPerfRegOfDwarf[reg]).value_or(0);
    return 0;
  }

  static int AccessFpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) {
    return -UNW_EBADREG;
  }
  static int Resume(unw_addr_space_t, unw_cursor_t*, void*) { return -UNW_EINVAL; }
  static int GetProcName(unw_addr_space_t, unw_word_t, char*, size_t, unw_word_t*, void*) {
    return -UNW_ENOINFO;
  }

  const ProcessFiles* files_;
  const size_t max_sessions_;
  std::function<void(std::string)> warn_;
  CfiModuleFiles module_files_;
  unw_accessors_t accessors_ = {};
  absl::flat_hash_map<uint32_t, Space> spaces_;
  // By module index; boxed: the processes' Placed point at them.
  absl::flat_hash_map<int64_t, std::unique_ptr<ModuleCfi>> modules_;
  std::vector<Placed>* placed_ = nullptr;  // the process's, during a walk
  CfiWalk* walk_ = nullptr;
  uint64_t clock_ = 0;
};

LibunwindUnwinder::LibunwindUnwinder(const ProcessFiles* files, DwarfUnwinderOptions options)
    : CfiUnwinder(options.max_frames),
      impl_(std::make_unique<Impl>(files, options.max_sessions,
                                   [this](std::string w) { Warn(std::move(w)); })) {}
LibunwindUnwinder::~LibunwindUnwinder() = default;

CfiUnwinder::WalkEnd LibunwindUnwinder::Walk(CfiWalk* walk) {
  return impl_->Walk(walk);
}

}  // namespace profcpu::symbolize
