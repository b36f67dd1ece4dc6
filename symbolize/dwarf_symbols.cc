#include "symbolize/dwarf_symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/errno_status.h"
#include "base/status_macros.h"
#include "base/unique_fd.h"
#include "symbolize/demangle.h"
#include "symbolize/elf_file.h"
#include "symbolize/interval_sweep.h"

namespace profcpu::symbolize {
namespace {

constexpr uint32_t kNoFunction = UINT32_MAX;

struct DwarfEnder {
  void operator()(Dwarf* dwarf) const { dwarf_end(dwarf); }
};
using DwarfPtr = std::unique_ptr<Dwarf, DwarfEnder>;

// libdw (elfutils 0.188) takes strings from .debug_str and .debug_line_str
// with strlen after checking only their offsets: a section whose last string
// lacks its NUL makes it read past the section (found by elf_symbols_fuzzer).
// Called after dwarf_begin_elf, which has decompressed the sections in place.
bool StringSectionsAreTerminated(Elf* elf) {
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) return false;
    const char* name = elf_strptr(elf, names, header.sh_name);
    if (name == nullptr || header.sh_type == SHT_NOBITS) continue;
    absl::string_view section(name);
    // .debug_str, .zdebug_str (old GNU compression), .debug_str.dwo, ...
    if (!absl::ConsumePrefix(&section, ".z")) absl::ConsumePrefix(&section, ".");
    absl::ConsumeSuffix(&section, ".dwo");
    if (section != "debug_str" && section != "debug_line_str") continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) return false;
    if (data->d_size > 0 &&
        (data->d_buf == nullptr || static_cast<const char*>(data->d_buf)[data->d_size - 1] != 0)) {
      return false;
    }
  }
  return true;
}

// Tags whose children may hold function definitions or inlined calls. Types,
// variables and parameters are not descended into: they hold no code.
bool MayContainCode(int tag) {
  switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_partial_unit:
    case DW_TAG_namespace:
    case DW_TAG_module:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
      return true;
    default:
      return false;
  }
}

std::optional<uint64_t> UdataAttr(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  Dwarf_Word value;
  if (dwarf_attr(die, name, &attr) == nullptr || dwarf_formudata(&attr, &value) != 0) {
    return std::nullopt;
  }
  return value;
}

// The name to show: the linkage name demangled (it carries namespaces,
// classes and parameters, as perf prints ELF symbols), else DW_AT_name;
// both followed through DW_AT_abstract_origin and DW_AT_specification.
std::string FunctionName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (unsigned int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, name, &attr) != nullptr) {
      const char* linkage = dwarf_formstring(&attr);
      if (linkage != nullptr && *linkage != '\0') return Demangle(linkage);
    }
  }
  if (dwarf_attr_integrate(die, DW_AT_name, &attr) != nullptr) {
    const char* plain = dwarf_formstring(&attr);
    if (plain != nullptr) return plain;
  }
  return "";
}

// What libdw holds of the file once open: its .debug_* sections,
// decompressed (the sizes come from the section and compression headers, so
// nothing is read or inflated to count them).
uint64_t DebugSectionBytes(Elf* elf) {
  uint64_t bytes = 0;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == nullptr) continue;
    absl::string_view section(name);
    if (!absl::StartsWith(section, ".debug_") && !absl::StartsWith(section, ".zdebug_")) continue;
    GElf_Chdr chdr;
    const uint64_t size = (shdr.sh_flags & SHF_COMPRESSED) != 0 && gelf_getchdr(scn, &chdr) != nullptr
                              ? chdr.ch_size
                              : shdr.sh_size;
    bytes = size > UINT64_MAX - bytes ? UINT64_MAX : bytes + size;  // hostile sizes saturate
  }
  return bytes;
}

}  // namespace

class DwarfSymbols::Impl {
 public:
  Impl(ElfFile file, DwarfPtr dwarf, std::string what, const DwarfLimits& limits)
      : file_(std::move(file)), dwarf_(std::move(dwarf)), what_(std::move(what)),
        limits_(limits) {}

  void IndexUnits() {
    Dwarf_CU* cu = nullptr;
    Dwarf_CU* next = nullptr;
    Dwarf_Half version;
    uint8_t unit_type;
    Dwarf_Die cudie;
    Dwarf_Die subdie;
    while (dwarf_get_units(dwarf_.get(), cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
      cu = next;
      if (unit_type != DW_UT_compile && unit_type != DW_UT_partial) continue;
      if (units_.size() >= limits_.max_units) {
        truncated_ = true;
        break;
      }
      const uint32_t index = static_cast<uint32_t>(units_.size());
      units_.emplace_back();
      units_.back().cudie = cudie;
      Dwarf_Addr base, start, end;
      ptrdiff_t offset = 0;
      while ((offset = dwarf_ranges(&cudie, offset, &base, &start, &end)) > 0) {
        if (start < end) unit_ranges_.push_back({start, end, index});
      }
    }
    std::sort(unit_ranges_.begin(), unit_ranges_.end(),
              [](const Range& a, const Range& b) { return a.low < b.low; });
  }

  std::vector<Frame> Lookup(uint64_t address) {
    std::vector<Frame> frames;
    auto it = std::upper_bound(unit_ranges_.begin(), unit_ranges_.end(), address,
                               [](uint64_t a, const Range& r) { return a < r.low; });
    // Unit ranges may nest or overlap (LTO); look back over the few that start
    // at or before the address for one that holds it.
    Unit* unit = nullptr;
    for (int back = 0; it != unit_ranges_.begin() && back < 16; ++back) {
      --it;
      if (address < it->high) {
        unit = &units_[it->item];
        break;
      }
    }
    if (unit == nullptr) return frames;
    if (!unit->indexed) IndexFunctions(unit);

    auto seg = std::upper_bound(unit->segments.begin(), unit->segments.end(), address,
                                [](uint64_t a, const Segment& s) { return a < s.start; });
    if (seg == unit->segments.begin()) return frames;
    --seg;
    uint32_t func = seg->function;
    if (func == kNoFunction) return frames;

    // Innermost first; stop after the first function that was not inlined
    // (an out-of-line function nested in another is not called by it here).
    std::optional<std::pair<std::string, uint32_t>> call_site;  // set by the inner frame
    Dwarf_Line* line = dwarf_getsrc_die(&unit->cudie, address);
    uint64_t entry = 0;
    while (func != kNoFunction) {
      const Function& f = unit->functions[func];
      Frame frame;
      frame.function = NameOf(unit, func);
      frame.inlined = f.inlined;
      if (!call_site.has_value()) {
        if (line != nullptr) {
          int lineno = 0;
          if (dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
            frame.line = static_cast<uint32_t>(lineno);
          }
          const char* file = dwarf_linesrc(line, nullptr, nullptr);
          if (file != nullptr) frame.source_file = file;
        }
      } else {
        frame.source_file = call_site->first;
        frame.line = call_site->second;
      }
      call_site = std::make_pair(FileName(unit, f.call_file), f.call_line);
      frames.push_back(std::move(frame));
      entry = f.entry;
      if (!f.inlined) break;
      func = f.parent;
    }
    // Every frame shows its offset from the real (outermost) function's
    // entry, as perf prints inlined frames.
    if (address >= entry) {
      for (Frame& frame : frames) frame.offset = address - entry;
    }
    return frames;
  }

  size_t unit_count() const { return units_.size(); }
  bool truncated() const { return truncated_; }

  size_t EstimatedBytes() const {
    return sizeof(*this) + section_bytes_ + units_.capacity() * sizeof(Unit) +
           unit_ranges_.capacity() * sizeof(Range) + indexed_bytes_;
  }

  void SetSectionBytes(uint64_t bytes) { section_bytes_ = bytes; }

 private:
  struct Range {
    uint64_t low = 0;
    uint64_t high = 0;
    uint32_t item = 0;   // unit index, or function index
    uint32_t depth = 0;  // nesting of the function (functions only)
  };
  struct Function {
    Dwarf_Off die_offset = 0;
    uint32_t parent = kNoFunction;  // the function this one is nested in
    bool inlined = false;
    uint32_t call_file = 0;
    uint32_t call_line = 0;
    uint64_t entry = 0;  // lowest address of its ranges
  };
  // The deepest function covering [start, next segment's start).
  struct Segment {
    uint64_t start = 0;
    uint32_t function = kNoFunction;
  };
  struct Unit {
    Dwarf_Die cudie;
    std::vector<Function> functions;
    std::vector<Segment> segments;
    bool indexed = false;
    absl::flat_hash_map<uint32_t, std::string> names;
  };

  // Walks the unit's DIE tree once: every subprogram and inlined subroutine
  // with code ranges, with the function it sits in, flattened into segments
  // that each name the deepest function covering them.
  void IndexFunctions(Unit* unit) {
    unit->indexed = true;
    std::vector<Range> ranges;
    struct Pending {
      Dwarf_Die die;
      uint32_t function;  // the enclosing function of this DIE's children
      uint32_t depth;
    };
    std::vector<Pending> stack;
    Dwarf_Die child;
    if (dwarf_child(&unit->cudie, &child) == 0) stack.push_back({child, kNoFunction, 0});
    while (!stack.empty()) {
      Pending p = stack.back();
      stack.pop_back();
      // Siblings are pushed as they are reached, keeping the stack as deep
      // as the tree, not as wide.
      Dwarf_Die sibling;
      if (dwarf_siblingof(&p.die, &sibling) == 0) stack.push_back({sibling, p.function, p.depth});
      const int tag = dwarf_tag(&p.die);
      uint32_t enclosing = p.function;
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
        if (unit->functions.size() >= limits_.max_functions_per_unit) {
          truncated_ = true;
          break;
        }
        const uint32_t index = static_cast<uint32_t>(unit->functions.size());
        Function f;
        f.die_offset = dwarf_dieoffset(&p.die);
        f.parent = p.function;
        f.inlined = tag == DW_TAG_inlined_subroutine;
        f.call_file = static_cast<uint32_t>(UdataAttr(&p.die, DW_AT_call_file).value_or(0));
        f.call_line = static_cast<uint32_t>(UdataAttr(&p.die, DW_AT_call_line).value_or(0));
        f.entry = UINT64_MAX;
        size_t before = ranges.size();
        Dwarf_Addr base, start, end;
        ptrdiff_t offset = 0;
        while ((offset = dwarf_ranges(&p.die, offset, &base, &start, &end)) > 0) {
          if (start >= end) continue;
          ranges.push_back({start, end, index, p.depth});
          f.entry = std::min<uint64_t>(f.entry, start);
        }
        if (ranges.size() > before) {  // declarations and abstract instances have no code
          unit->functions.push_back(f);
          enclosing = index;
        }
      }
      if (MayContainCode(tag) && p.depth + 1 < limits_.max_depth &&
          dwarf_child(&p.die, &child) == 0) {
        stack.push_back({child, enclosing, p.depth + 1});
      } else if (p.depth + 1 >= limits_.max_depth) {
        truncated_ = true;
      }
    }
    Flatten(ranges, &unit->segments);
    indexed_bytes_ += unit->functions.capacity() * sizeof(Function) +
                      unit->segments.capacity() * sizeof(Segment);
  }

  // At each place, the covering range that is deepest (then latest in DIE
  // order) names it.
  static void Flatten(const std::vector<Range>& ranges, std::vector<Segment>* out) {
    SweepIntervals(
        ranges.size(), [&](uint32_t i) { return ranges[i].low; },
        [&](uint32_t i) { return ranges[i].high; },
        [&](uint32_t a, uint32_t b) {
          return std::tie(ranges[a].depth, a) > std::tie(ranges[b].depth, b);
        },
        [&](uint64_t point, uint32_t winner) {
          out->push_back({point, winner == kNoInterval ? kNoFunction : ranges[winner].item});
        });
  }

  const std::string& NameOf(Unit* unit, uint32_t func) {
    auto [it, inserted] = unit->names.try_emplace(func);
    if (inserted) {
      Dwarf_Die die;
      if (dwarf_offdie(dwarf_.get(), unit->functions[func].die_offset, &die) != nullptr) {
        it->second = FunctionName(&die);
      }
      indexed_bytes_ += sizeof(*it) + it->second.capacity();
    }
    return it->second;
  }

  std::string FileName(Unit* unit, uint32_t index) {
    Dwarf_Files* files = nullptr;
    size_t count = 0;
    if (dwarf_getsrcfiles(&unit->cudie, &files, &count) != 0 || index >= count) return "";
    const char* name = dwarf_filesrc(files, index, nullptr, nullptr);
    return name == nullptr ? "" : name;
  }

  ElfFile file_;    // dwarf_ reads from it: declared first, so it outlives dwarf_
  DwarfPtr dwarf_;
  std::string what_;
  DwarfLimits limits_;
  std::vector<Unit> units_;
  std::vector<Range> unit_ranges_;
  bool truncated_ = false;
  uint64_t section_bytes_ = 0;
  size_t indexed_bytes_ = 0;  // functions, segments and names of the units indexed
};

absl::StatusOr<std::unique_ptr<DwarfSymbols>> DwarfSymbols::FromFd(int fd, absl::string_view what,
                                                                  const DwarfLimits& limits) {
  if (!LibelfReady()) return absl::InternalError("libelf: elf_version failed");
  base::UniqueFd own(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!own.valid()) return base::ErrnoStatus(errno, absl::StrCat("dup fd of ", what));
  PROFCPU_ASSIGN_OR_RETURN(ElfFile file, ElfFile::Open(std::move(own), what));
  // Counted before dwarf_begin_elf, which reads every debug section.
  const uint64_t section_bytes = DebugSectionBytes(file.get());
  if (section_bytes > limits.max_section_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, " has ", section_bytes >> 20, " MB of DWARF, over the ",
        limits.max_section_bytes >> 20,
        " MB read per module here: named from its ELF symbol tables only, without inlined "
        "frames or source lines"));
  }
  // dwarf_begin_elf decompresses SHF_COMPRESSED and .zdebug sections itself.
  DwarfPtr dwarf(dwarf_begin_elf(file.get(), DWARF_C_READ, nullptr));
  if (dwarf == nullptr) {
    int error = dwarf_errno();
    return absl::NotFoundError(absl::StrCat(what, " has no usable DWARF: ", dwarf_errmsg(error)));
  }
  if (!StringSectionsAreTerminated(file.get())) {
    return absl::DataLossError(absl::StrCat(
        what, " has malformed DWARF string sections (a string runs off the end): DWARF not used"));
  }
  auto impl =
      std::make_unique<Impl>(std::move(file), std::move(dwarf), std::string(what), limits);
  impl->IndexUnits();
  impl->SetSectionBytes(section_bytes);
  return std::unique_ptr<DwarfSymbols>(new DwarfSymbols(std::move(impl)));
}

DwarfSymbols::DwarfSymbols(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DwarfSymbols::~DwarfSymbols() = default;

std::vector<Frame> DwarfSymbols::Lookup(uint64_t address) { return impl_->Lookup(address); }
size_t DwarfSymbols::unit_count() const { return impl_->unit_count(); }
size_t DwarfSymbols::EstimatedBytes() const { return impl_->EstimatedBytes(); }
bool DwarfSymbols::truncated() const { return impl_->truncated(); }

}  // namespace profcpu::symbolize
