#include "render/pprof_writer.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "base/status_macros.h"
#include "archive/deflate.h"
#include "render/xml_text.h"
#include "proto/profile.pb.h"  // generated from render/proto/profile.proto

namespace profcpu::render {
namespace {

namespace pb = ::perftools::profiles;

// profile.proto's strings must be UTF-8 (protobuf readers reject the file
// otherwise), and names come from the target: clean them as the SVG does.
class StringTable {
 public:
  explicit StringTable(pb::Profile* profile) : profile_(profile) { Index(""); }
  int64_t Index(absl::string_view text) {
    auto [it, inserted] = ids_.try_emplace(std::string(text), profile_->string_table_size());
    if (inserted) {
      std::string* entry = profile_->add_string_table();
      if (IsCleanText(text)) {
        entry->assign(text.data(), text.size());
      } else {
        AppendCleanText(text, entry);
      }
    }
    return it->second;
  }

 private:
  pb::Profile* profile_;
  absl::flat_hash_map<std::string, int64_t> ids_;
};

// What tells mappings apart: the module and where it was loaded (native), the
// process mapping an address fell in (its start), or the kind and space alone
// (kernel; imported text).
struct MappingKey {
  symbolize::CodeKind kind;
  uint32_t space;
  uint64_t bias;   // address - file offset, native code only
  uint64_t start;  // the process mapping's start, when the replay knew it
  std::string name;

  template <typename H>
  friend H AbslHashValue(H h, const MappingKey& k) {
    return H::combine(std::move(h), k.kind, k.space, k.bias, k.start, k.name);
  }
  friend bool operator==(const MappingKey& a, const MappingKey& b) {
    return std::tie(a.kind, a.space, a.bias, a.start, a.name) ==
           std::tie(b.kind, b.space, b.bias, b.start, b.name);
  }
};

struct MappingInfo {
  std::string filename;
  std::string build_id;
  // The process mapping's bounds when known; otherwise the lowest and
  // highest address sampled in it (kernel code, imported text).
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t low = std::numeric_limits<uint64_t>::max();
  uint64_t high = 0;
  uint64_t bias = 0;
  bool native = false;
  bool all_named = true;
  bool any_file = false;
  bool any_line = false;
  bool any_inline = false;
};

absl::string_view Basename(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// Where the module was loaded: address - file offset. A return address was
// normalized as address - 1 (offset_adjust), so that the call's function is
// looked up; undo that, or a module's leaf and caller frames would seem to be
// two loads.
uint64_t LoadBias(const fold::Location& location) {
  return location.address - location.offset_adjust - location.code.value;
}

MappingKey KeyFor(const fold::Location& location, const symbolize::Symbolization* symbols,
                  const std::vector<symbolize::Module>& modules, std::string* build_id) {
  const symbolize::CodeLocation& code = location.code;
  switch (code.kind) {
    case symbolize::CodeKind::kKernel:
      return {code.kind, 0, 0, 0, "[kernel.kallsyms]"};
    case symbolize::CodeKind::kNative:
      if (code.space < modules.size()) {
        const symbolize::Module& module = modules[code.space];
        *build_id = absl::BytesToHexString(module.build_id);
        return {code.kind, code.space, LoadBias(location), location.mapping_start, module.path};
      }
      return {code.kind, code.space, LoadBias(location), location.mapping_start,
              symbols != nullptr ? symbols->module : "[unknown]"};
    case symbolize::CodeKind::kProcess: {
      // JIT or anonymous memory of one process: a bracketed name, which pprof
      // knows not to open as a binary.
      absl::string_view module;
      if (symbols != nullptr) module = symbols->module;
      std::string name = module.empty() || module[0] == '[' || module == "[unknown]"
                             ? absl::StrCat("[anon pid ", code.space, "]")
                             : absl::StrCat("[", Basename(module), "]");
      return {code.kind, code.space, 0, location.mapping_start, std::move(name)};
    }
    case symbolize::CodeKind::kImported:
      break;
  }
  return {code.kind, 0, 0, 0, symbols != nullptr ? symbols->module : "[unknown]"};
}

struct SampleKey {
  uint32_t stack, pid, tid, comm;
  template <typename H>
  friend H AbslHashValue(H h, const SampleKey& k) {
    return H::combine(std::move(h), k.stack, k.pid, k.tid, k.comm);
  }
  friend bool operator==(const SampleKey& a, const SampleKey& b) {
    return std::tie(a.stack, a.pid, a.tid, a.comm) == std::tie(b.stack, b.pid, b.tid, b.comm);
  }
};

int64_t ClampToInt64(uint64_t value) {
  return static_cast<int64_t>(std::min<uint64_t>(value, std::numeric_limits<int64_t>::max()));
}

uint64_t Scaled(uint64_t value, uint64_t scale) {
  if (scale <= 1 || value == 0) return value;
  const uint64_t limit = std::numeric_limits<uint64_t>::max();
  return value > limit / scale ? limit : value * scale;
}

}  // namespace

PprofOptions PprofOptionsFor(const fold::RecordingSummary& summary) {
  const recording::Header& header = summary.header;
  PprofOptions pprof;
  pprof.event_name = header.event_name;
  pprof.frequency_mode = header.frequency_mode;
  pprof.sample_rate = header.sample_rate;
  if (summary.mode == "offcpu" || summary.mode == "wall") {
    pprof.period_type = summary.mode == "offcpu" ? "off-cpu" : "wall";
    pprof.period_unit = summary.microseconds ? "microseconds" : "count";
  } else if (summary.weighted) {
    pprof.periods_are_samples = true;  // stacks counted in the kernel (BPF)
  }
  pprof.start_unix_ns = header.start_realtime_ns;
  if (summary.last_sample_ns > header.start_time_ns) {
    pprof.duration_ns = static_cast<int64_t>(summary.last_sample_ns - header.start_time_ns);
  }
  pprof.comments = {absl::StrCat("profcpu ", header.profcpu_version),
                    absl::StrCat("target: ", header.target),
                    absl::StrCat("sampling: ", fold::ModeDescription(summary))};
  return pprof;
}

absl::StatusOr<std::string> SerializePprof(const fold::Profile& profile,
                                           const PprofOptions& options) {
  pb::Profile out;
  StringTable strings(&out);

  // Values: the sample count, then what the period measures. cpu-clock and
  // task-clock periods are nanoseconds of CPU time; other events count events.
  const bool time_event = options.event_name == "cpu-clock" || options.event_name == "task-clock";
  pb::ValueType* samples_type = out.add_sample_type();
  samples_type->set_type(strings.Index(options.count_type));
  samples_type->set_unit(strings.Index(options.count_unit));
  pb::ValueType* period_type = samples_type;
  if (!options.periods_are_samples) {
    period_type = out.add_sample_type();
    if (!options.period_type.empty()) {
      period_type->set_type(strings.Index(options.period_type));
      period_type->set_unit(strings.Index(options.period_unit));
    } else {
      period_type->set_type(strings.Index(time_event ? "cpu" : options.event_name));
      period_type->set_unit(strings.Index(time_event ? "nanoseconds" : "count"));
    }
    if (!options.period_type.empty()) {
      // Weights (off-CPU time): no fixed period between samples.
    } else if (!options.frequency_mode) {
      out.set_period(ClampToInt64(options.sample_rate));
    } else if (time_event && options.sample_rate > 0) {
      out.set_period(static_cast<int64_t>(1'000'000'000 / options.sample_rate));
    }
  }
  *out.mutable_period_type() = *period_type;
  out.set_default_sample_type(period_type->type());
  out.set_time_nanos(options.start_unix_ns);
  out.set_duration_nanos(options.duration_ns);
  for (const std::string& comment : options.comments) out.add_comment(strings.Index(comment));

  // Mappings and locations, one pprof location per profile location.
  absl::flat_hash_map<MappingKey, uint32_t> mapping_ids;
  std::vector<MappingInfo> mappings;
  absl::flat_hash_map<std::pair<std::string, std::string>, uint64_t> function_ids;
  for (uint32_t id = 0; id < profile.location_count(); ++id) {
    const fold::Location& location = profile.location(id);
    const symbolize::Symbolization* symbols = profile.symbols().Find(location.code);
    pb::Location* loc = out.add_location();
    loc->set_id(id + 1);
    loc->set_address(location.address);
    const bool named = symbols != nullptr && !symbols->frames.empty();
    // A user address no mapping covered (a frame-pointer walk through code
    // without frame pointers reads garbage): no mapping at all, rather than
    // one spanning garbage that overlaps every real one.
    const bool unmapped = location.code.kind == symbolize::CodeKind::kProcess &&
                          location.mapping_end <= location.mapping_start;
    MappingInfo* mapping = nullptr;
    if (!unmapped) {
      std::string build_id;
      MappingKey key = KeyFor(location, symbols, profile.modules(), &build_id);
      auto [slot, added] = mapping_ids.try_emplace(key, static_cast<uint32_t>(mappings.size()));
      if (added) {
        MappingInfo& info = mappings.emplace_back();
        info.filename = key.name;
        info.build_id = std::move(build_id);
        info.bias = key.bias;
        info.native = key.kind == symbolize::CodeKind::kNative;
        info.start = location.mapping_start;
        info.end = location.mapping_end;
      }
      mapping = &mappings[slot->second];
      mapping->low = std::min(mapping->low, location.address);
      mapping->high = std::max(mapping->high, location.address);
      loc->set_mapping_id(slot->second + 1);
      mapping->all_named = mapping->all_named && named;
    }
    if (!named) continue;
    for (const symbolize::Frame& frame : symbols->frames) {  // innermost first, as pprof wants
      auto [function, new_function] = function_ids.try_emplace(
          std::make_pair(frame.function, frame.source_file), out.function_size() + 1);
      if (new_function) {
        pb::Function* f = out.add_function();
        f->set_id(function->second);
        f->set_name(strings.Index(frame.function));
        f->set_system_name(f->name());
        f->set_filename(strings.Index(frame.source_file));
      }
      pb::Line* line = loc->add_line();
      line->set_function_id(function->second);
      line->set_line(frame.line);
      if (mapping == nullptr) continue;
      mapping->any_file = mapping->any_file || !frame.source_file.empty();
      mapping->any_line = mapping->any_line || frame.line != 0;
      mapping->any_inline = mapping->any_inline || frame.inlined;
    }
  }

  // Samples, aggregated; labels say whose they were.
  const int64_t pid_key = strings.Index("pid");
  const int64_t tid_key = strings.Index("tid");
  const int64_t thread_key = strings.Index("thread");
  absl::flat_hash_map<SampleKey, std::pair<uint64_t, uint64_t>> totals;
  std::vector<SampleKey> order;
  for (const fold::Sample& sample : profile.samples()) {
    const SampleKey key{sample.stack, sample.pid, sample.tid, sample.comm};
    auto [it, added] = totals.try_emplace(key, 0, 0);
    if (added) order.push_back(key);
    it->second.first += 1;
    // Saturating: periods come from the recording, which may be corrupt.
    uint64_t& sum = it->second.second;
    sum += std::min(sample.period, std::numeric_limits<uint64_t>::max() - sum);
  }
  for (const SampleKey& key : order) {
    const auto& [count, sum] = totals[key];
    const uint64_t period = Scaled(sum, options.period_scale);
    pb::Sample* sample = out.add_sample();
    for (uint32_t location : profile.stack(key.stack)) sample->add_location_id(location + 1);
    if (options.periods_are_samples) {
      sample->add_value(ClampToInt64(period));
    } else {
      sample->add_value(ClampToInt64(count));
      sample->add_value(ClampToInt64(period));
    }
    pb::Label* label = sample->add_label();
    label->set_key(pid_key);
    label->set_num(key.pid);
    label = sample->add_label();
    label->set_key(tid_key);
    label->set_num(key.tid);
    label = sample->add_label();
    label->set_key(thread_key);
    label->set_str(strings.Index(profile.string(key.comm)));
  }

  // pprof shows mapping[0] as the profile's main binary: the native module
  // in the most samples, preferring one not named like a shared library.
  uint32_t main_mapping = 0;
  {
    std::vector<uint64_t> hits(mappings.size(), 0);
    std::vector<uint32_t> seen_in(mappings.size(), UINT32_MAX);
    for (uint32_t i = 0; i < order.size(); ++i) {
      for (uint32_t location : profile.stack(order[i].stack)) {
        if (out.location(location).mapping_id() == 0) continue;  // unmapped
        const uint32_t m = static_cast<uint32_t>(out.location(location).mapping_id() - 1);
        if (seen_in[m] == i) continue;
        seen_in[m] = i;
        hits[m] += totals[order[i]].first;
      }
    }
    auto better = [&](uint32_t a, uint32_t b) {  // is a a better main binary than b?
      auto rank = [&](uint32_t m) {
        const bool library = Basename(mappings[m].filename).find(".so") != absl::string_view::npos;
        return std::make_tuple(mappings[m].native, !library, hits[m]);
      };
      return rank(a) > rank(b);
    };
    for (uint32_t m = 1; m < mappings.size(); ++m) {
      if (better(m, main_mapping)) main_mapping = m;
    }
  }
  std::vector<uint32_t> mapping_order(mappings.size());
  for (uint32_t i = 0; i < mappings.size(); ++i) mapping_order[i] = i;
  if (!mappings.empty()) std::swap(mapping_order[0], mapping_order[main_mapping]);
  for (uint32_t index : mapping_order) {
    const MappingInfo& info = mappings[index];
    pb::Mapping* mapping = out.add_mapping();
    mapping->set_id(index + 1);
    const bool bounded = info.end > info.start;
    const uint64_t start = bounded ? info.start : info.low;
    mapping->set_memory_start(start);
    mapping->set_memory_limit(bounded ? info.end : info.high == UINT64_MAX ? info.high : info.high + 1);
    // memory_start - file_offset is the load bias, so pprof recovers each
    // address's offset in the file.
    mapping->set_file_offset(info.native ? start - info.bias : 0);
    mapping->set_filename(strings.Index(info.filename));
    mapping->set_build_id(strings.Index(info.build_id));
    mapping->set_has_functions(info.all_named);
    mapping->set_has_filenames(info.any_file);
    mapping->set_has_line_numbers(info.any_line);
    mapping->set_has_inline_frames(info.any_inline);
  }

  std::string bytes;
  if (!out.SerializeToString(&bytes)) {
    return absl::InternalError("serializing the pprof profile failed (is it over 2 GiB?)");
  }
  return bytes;
}

absl::StatusOr<std::string> Gzip(absl::string_view data) {
  return archive::Deflate(data, archive::DeflateContainer::kGzip);
}

absl::Status WritePprofFile(const fold::Profile& profile, const PprofOptions& options,
                            const std::string& path) {
  PROFCPU_ASSIGN_OR_RETURN(std::string bytes, SerializePprof(profile, options));
  PROFCPU_ASSIGN_OR_RETURN(std::string compressed, Gzip(bytes));
  return base::WriteFile(path, compressed);
}

}  // namespace profcpu::render
