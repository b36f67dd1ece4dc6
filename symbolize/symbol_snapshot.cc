#include "symbolize/symbol_snapshot.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/byte_io.h"

namespace profcpu::symbolize {
namespace {

// Smallest encodings, used to reject counts the remaining bytes cannot hold
// before allocating for them.
constexpr size_t kMinStringBytes = 4;
constexpr size_t kModuleBytes = 4 + 4 + 4 + 8 + 4 + 4;
constexpr size_t kMinEntryBytes = 1 + 4 + 8 + 4 + 4;
constexpr size_t kFrameBytes = 4 + 8 + 1 + 4 + 4;
constexpr size_t kSegmentBytes = 8 + 8 + 8 + 1;
constexpr uint32_t kMaxSegmentsPerModule = 1024;  // real files have a handful
// Far above real profiles; they bound the memory a hostile blob can make us
// spend per input byte.
constexpr uint32_t kMaxStrings = 32u << 20;
constexpr uint32_t kMaxModules = 1u << 20;
constexpr uint32_t kMaxEntries = 64u << 20;
constexpr uint32_t kMaxFramesPerEntry = 4096;  // inline depth; real chains are < 100
constexpr uint8_t kFrameInlined = 1;

class StringTable {
 public:
  StringTable() { Intern(""); }
  uint32_t Intern(absl::string_view s) {
    auto [it, inserted] = ids_.try_emplace(s, static_cast<uint32_t>(strings_.size()));
    if (inserted) strings_.push_back(s);
    return it->second;
  }
  const std::vector<absl::string_view>& strings() const { return strings_; }

 private:
  // Views into the table and modules being serialized, which outlive this.
  absl::flat_hash_map<absl::string_view, uint32_t> ids_;
  std::vector<absl::string_view> strings_;
};

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupt symbol snapshot: ", what));
}

}  // namespace

std::string SerializeSnapshot(const SymbolTable& table, const std::vector<Module>& modules) {
  std::vector<std::pair<CodeLocation, const Symbolization*>> entries;
  entries.reserve(table.size());
  for (const auto& [location, symbolization] : table.entries()) {
    entries.emplace_back(location, &symbolization);
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });

  StringTable strings;
  for (const Module& m : modules) {
    strings.Intern(m.path);
    strings.Intern(m.build_id);
  }
  for (const auto& [location, s] : entries) {
    strings.Intern(s->module);
    for (const Frame& f : s->frames) {
      strings.Intern(f.function);
      strings.Intern(f.source_file);
    }
  }

  std::string out;
  base::ByteWriter w(&out);
  out.append(kSnapshotMagic.data(), kSnapshotMagic.size());
  w.U32(kSnapshotVersion);
  w.U32(static_cast<uint32_t>(strings.strings().size()));
  for (absl::string_view s : strings.strings()) w.String(s);
  w.U32(static_cast<uint32_t>(modules.size()));
  for (const Module& m : modules) {
    w.U32(strings.Intern(m.path));
    w.U32(m.dev_major);
    w.U32(m.dev_minor);
    w.U64(m.inode);
    w.U32(strings.Intern(m.build_id));
    w.U32(m.example_pid);
    w.U32(static_cast<uint32_t>(m.segments.size()));
    for (const LoadSegment& segment : m.segments) {
      w.U64(segment.file_offset);
      w.U64(segment.file_size);
      w.U64(segment.address);
      w.U8(segment.executable ? 1 : 0);
    }
    w.U8(m.debug_info ? 1 : 0);
  }
  w.U32(static_cast<uint32_t>(entries.size()));
  for (const auto& [location, s] : entries) {
    w.U8(static_cast<uint8_t>(location.kind));
    w.U32(location.space);
    w.U64(location.value);
    w.U32(location.epoch);
    w.U32(strings.Intern(s->module));
    w.U32(static_cast<uint32_t>(s->frames.size()));
    for (const Frame& f : s->frames) {
      w.U32(strings.Intern(f.function));
      w.U64(f.offset);
      w.U8(f.inlined ? kFrameInlined : 0);
      w.U32(strings.Intern(f.source_file));
      w.U32(f.line);
    }
  }
  return out;
}

absl::Status ParseSnapshot(absl::string_view data, SymbolTable* table,
                           std::vector<Module>* modules) {
  if (data.substr(0, kSnapshotMagic.size()) != kSnapshotMagic) {
    return Corrupt("not a profcpu symbol snapshot (bad magic)");
  }
  base::ByteReader r(data.substr(kSnapshotMagic.size()));
  uint32_t version = r.U32();
  if (!r.ok()) return Corrupt("truncated header");
  if (version == 0 || version > kSnapshotVersion) {
    return absl::UnimplementedError(absl::StrCat("symbol snapshot version ", version,
                                                 " is not supported (this profcpu reads ",
                                                 kSnapshotVersion, ")"));
  }

  uint32_t string_count = r.U32();
  if (!r.ok() || string_count == 0 || string_count > kMaxStrings ||
      string_count > r.remaining() / kMinStringBytes) {
    return Corrupt("bad string count");
  }
  std::vector<std::string> strings;
  strings.reserve(string_count);
  for (uint32_t i = 0; i < string_count && r.ok(); ++i) strings.push_back(r.String());
  if (!r.ok()) return Corrupt("truncated string table");
  if (!strings[0].empty()) return Corrupt("string 0 is not empty");
  bool bad_index = false;
  auto string_at = [&](uint32_t index) -> const std::string& {
    if (index >= strings.size()) {
      bad_index = true;
      return strings[0];
    }
    return strings[index];
  };

  uint32_t module_count = r.U32();
  if (!r.ok() || module_count > kMaxModules || module_count > r.remaining() / kModuleBytes) {
    return Corrupt("bad module count");
  }
  std::vector<Module> parsed_modules(module_count);
  for (Module& m : parsed_modules) {
    m.path = string_at(r.U32());
    m.dev_major = r.U32();
    m.dev_minor = r.U32();
    m.inode = r.U64();
    m.build_id = string_at(r.U32());
    m.example_pid = r.U32();
    if (version >= 2) {
      uint32_t segment_count = r.U32();
      if (!r.ok() || segment_count > kMaxSegmentsPerModule ||
          segment_count > r.remaining() / kSegmentBytes) {
        return Corrupt("bad segment count");
      }
      m.segments.resize(segment_count);
      for (LoadSegment& segment : m.segments) {
        segment.file_offset = r.U64();
        segment.file_size = r.U64();
        segment.address = r.U64();
        uint8_t executable = r.U8();
        if (executable > 1) return Corrupt("bad segment flags");
        segment.executable = executable != 0;
      }
    }
    if (version >= 3) {
      const uint8_t debug_info = r.U8();
      if (debug_info > 1) return Corrupt("bad module flags");
      m.debug_info = debug_info != 0;
    }
  }
  if (!r.ok()) return Corrupt("truncated module list");
  if (bad_index) return Corrupt("module names a string that does not exist");

  uint32_t entry_count = r.U32();
  if (!r.ok() || entry_count > kMaxEntries || entry_count > r.remaining() / kMinEntryBytes) {
    return Corrupt("bad entry count");
  }
  SymbolTable parsed_table;
  CodeLocation previous;
  for (uint32_t i = 0; i < entry_count; ++i) {
    CodeLocation location;
    uint8_t kind = r.U8();
    location.space = r.U32();
    location.value = r.U64();
    if (version >= 2) location.epoch = r.U32();
    Symbolization s;
    s.module = string_at(r.U32());
    uint32_t frame_count = r.U32();
    if (!r.ok()) return Corrupt("truncated entry");
    if (kind < static_cast<uint8_t>(CodeKind::kKernel) ||
        kind > static_cast<uint8_t>(CodeKind::kImported)) {
      return Corrupt(absl::StrCat("entry ", i, " has unknown kind ", kind));
    }
    location.kind = static_cast<CodeKind>(kind);
    if (location.kind == CodeKind::kNative && location.space >= module_count) {
      return Corrupt(
          absl::StrCat("entry ", i, " names module ", location.space, " of ", module_count));
    }
    // Sorted and unique by construction; anything else was not written by us.
    if (i > 0 && !(previous < location)) {
      return Corrupt(absl::StrCat("entry ", i, " is out of order or repeated"));
    }
    previous = location;
    if (frame_count > kMaxFramesPerEntry || frame_count > r.remaining() / kFrameBytes) {
      return Corrupt(absl::StrCat("entry ", i, " has a bad frame count"));
    }
    s.frames.resize(frame_count);
    for (Frame& f : s.frames) {
      f.function = string_at(r.U32());
      f.offset = r.U64();
      uint8_t flags = r.U8();
      f.source_file = string_at(r.U32());
      f.line = r.U32();
      if ((flags & ~kFrameInlined) != 0) return Corrupt("unknown frame flags");
      f.inlined = (flags & kFrameInlined) != 0;
    }
    if (!r.ok()) return Corrupt("truncated frames");
    if (bad_index) return Corrupt(absl::StrCat("entry ", i, " names a string that does not exist"));
    parsed_table.Insert(location, std::move(s));
  }
  if (r.remaining() != 0) {
    return Corrupt(absl::StrCat(r.remaining(), " unexpected bytes after the last entry"));
  }
  *table = std::move(parsed_table);
  *modules = std::move(parsed_modules);
  return absl::OkStatus();
}

}  // namespace profcpu::symbolize
