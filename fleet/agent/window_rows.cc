#include "fleet/agent/window_rows.h"

#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_join.h"
#include "fleet/store/stable_id.h"
#include "fold/folded_writer.h"
#include "fold/location_namer.h"

namespace profcpu::fleet {
namespace {

constexpr uint64_t kNsPerSecond = 1'000'000'000;

std::string FileName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Where a location's code lives, as every node would name it: JIT code by
// its kind, not by the process's perf map path, so ids agree across pods.
std::pair<std::string, std::string> ModuleOf(const fold::Profile& profile,
                                             const fold::Location& location) {
  using symbolize::CodeKind;
  if (location.kernel || location.code.kind == CodeKind::kKernel) return {"[kernel.kallsyms]", ""};
  if (location.code.kind == CodeKind::kNative && location.code.space < profile.modules().size()) {
    const symbolize::Module& module = profile.modules()[location.code.space];
    return {FileName(module.path), absl::BytesToHexString(module.build_id)};
  }
  const symbolize::Symbolization* named = profile.symbols().Find(location.code);
  if (named == nullptr || named->frames.empty()) return {"", ""};  // [unknown]
  // A process's JIT code, named from its perf map or jitdump.
  if (location.code.kind == CodeKind::kProcess) return {"[jit]", ""};
  return {FileName(named->module), ""};
}

// Names and ids each distinct Profile stack once.
class StackNamer {
 public:
  StackNamer(const fold::Profile& profile, WindowRows* rows)
      : profile_(profile), namer_(profile, FoldOptionsOfFolded()), rows_(rows) {}

  uint64_t StackIdOf(uint32_t stack) {
    auto [it, inserted] = stack_ids_.try_emplace(stack, 0);
    if (!inserted) return it->second;
    StackRow row;
    const std::vector<uint32_t>& locations = profile_.stack(stack);
    // Leaf first in the Profile; the store keeps root first.
    for (auto location = locations.rbegin(); location != locations.rend(); ++location) {
      const std::vector<std::string>& names = namer_.Names(*location, /*java=*/false);
      if (names.empty()) continue;
      auto [module, build_id] = ModuleOf(profile_, profile_.location(*location));
      for (const std::string& name : names) {
        const uint64_t id = StableId({name, module, build_id});
        if (frames_seen_.insert({id, true}).second) {
          rows_->frames.push_back({id, name, module, build_id});
        }
        row.frame_ids.push_back(id);
      }
    }
    row.id = StackId(row.frame_ids);
    it->second = row.id;
    if (stacks_seen_.insert({row.id, true}).second) rows_->stacks.push_back(std::move(row));
    return it->second;
  }

 private:
  static fold::FoldOptions FoldOptionsOfFolded() {
    fold::FoldOptions options;  // as folded_stacks.out (render/run_outputs.cc)
    options.keep_dotnet_tiers = options.keep_anonymous_namespaces = true;
    return options;
  }

  const fold::Profile& profile_;
  fold::LocationNamer namer_;
  WindowRows* rows_;
  absl::flat_hash_map<uint32_t, uint64_t> stack_ids_;
  absl::flat_hash_map<uint64_t, bool> frames_seen_;
  absl::flat_hash_map<uint64_t, bool> stacks_seen_;
};

}  // namespace

WindowRows BuildWindowRows(const fold::Profile& profile, const WindowClock& clock,
                           const LabelsOf& labels_of) {
  WindowRows rows;
  StackNamer stacks(profile, &rows);
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t> labels_by_process;  // (pid, comm)
  absl::flat_hash_map<std::string, uint32_t> label_ids;  // by the values, 0-separated
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint64_t>, size_t> row_of;
  for (const fold::Sample& sample : profile.samples()) {
    const uint64_t weight = clock.weighted && sample.period != 0 ? sample.period : 1;
    auto [process, new_process] = labels_by_process.try_emplace({sample.pid, sample.comm}, 0);
    if (new_process) {
      ProcessLabels labels = labels_of(sample.pid, profile.string(sample.comm));
      auto [id, new_labels] =
          label_ids.try_emplace(absl::StrJoin(labels.Values(), absl::string_view("\0", 1)),
                                rows.labels.size());
      if (new_labels) rows.labels.push_back(std::move(labels));
      process->second = id->second;
    }
    const int64_t wall_ns = clock.start_realtime_ns +
                            (static_cast<int64_t>(sample.time_ns) -
                             static_cast<int64_t>(clock.start_monotonic_ns));
    const uint32_t second = wall_ns > 0 ? static_cast<uint32_t>(wall_ns / kNsPerSecond) : 0;
    const uint64_t stack_id = stacks.StackIdOf(sample.stack);
    auto [row, new_row] = row_of.try_emplace({second, process->second, stack_id}, rows.samples.size());
    if (new_row) rows.samples.push_back({second, process->second, stack_id, 0});
    rows.samples[row->second].count += weight;
    rows.total += weight;
  }
  return rows;
}

}  // namespace profcpu::fleet
