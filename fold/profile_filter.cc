#include "fold/profile_filter.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace profcpu::fold {
namespace {

// Seconds after the start, as nanoseconds; negative and huge values clamp.
uint64_t OffsetNs(uint64_t start_ns, double seconds) {
  const double ns = std::max(0.0, seconds) * 1e9;
  if (ns >= 1.8e19 || static_cast<double>(start_ns) + ns >= 1.8e19) return UINT64_MAX;
  return start_ns + static_cast<uint64_t>(ns);
}

}  // namespace

bool IsIdleFunction(absl::string_view function) {
  static const absl::flat_hash_set<absl::string_view>* const kIdle =
      new absl::flat_hash_set<absl::string_view>({
          "acpi_idle_do_entry", "acpi_processor_ffh_cstate_enter", "acpi_safe_halt",
          "arch_cpu_idle", "cpu_idle", "cpu_idle_poll", "cpu_startup_entry",
          "cpuidle_enter_state", "default_idle", "do_idle", "enter_idle", "exit_idle",
          "idle_cpu", "intel_idle", "intel_idle_ibrs", "intel_idle_irq", "mwait_idle",
          "mwait_idle_with_hints", "native_safe_halt", "poll_idle", "ppc64_runlatch_off",
          "pseries_dedicated_idle_sleep", "psw_idle", "psw_idle_exit", "pv_native_safe_halt",
      });
  // GCC's clones keep the name before the first '.' ("mwait_idle_with_hints.constprop.0").
  return kIdle->contains(function.substr(0, function.find('.')));
}

ProfileFilterStats FilterProfile(const ProfileFilter& filter, Profile* profile) {
  ProfileFilterStats stats;
  const absl::flat_hash_set<uint32_t> pids(filter.pids.begin(), filter.pids.end());
  const absl::flat_hash_set<uint32_t> tids(filter.tids.begin(), filter.tids.end());
  // Thread names are interned: decide once per name.
  absl::flat_hash_map<uint32_t, bool> comm_kept;
  const uint64_t from = filter.from_s ? OffsetNs(filter.start_ns, *filter.from_s) : 0;
  const uint64_t to = filter.to_s ? OffsetNs(filter.start_ns, *filter.to_s) : UINT64_MAX;
  // Idleness depends only on the stack's innermost location.
  absl::flat_hash_map<uint32_t, bool> idle_stack;
  auto is_idle = [&](uint32_t stack_id) {
    auto [it, added] = idle_stack.try_emplace(stack_id, false);
    if (!added) return it->second;
    const std::vector<uint32_t>& stack = profile->stack(stack_id);
    if (stack.empty()) return false;
    const Location& leaf = profile->location(stack.front());
    const symbolize::Symbolization* symbols = profile->symbols().Find(leaf.code);
    it->second = leaf.kernel && symbols != nullptr && !symbols->frames.empty() &&
                 IsIdleFunction(symbols->frames.front().function);
    return it->second;
  };
  auto keep = [&](const Sample& sample) {
    if (!pids.empty() && !pids.contains(sample.pid)) return false;
    if (!tids.empty() && !tids.contains(sample.tid)) return false;
    if (!filter.comms.empty()) {
      auto [it, added] = comm_kept.try_emplace(sample.comm, false);
      if (added) {
        const std::string& name = profile->string(sample.comm);
        it->second = std::find(filter.comms.begin(), filter.comms.end(), name) !=
                     filter.comms.end();
      }
      if (!it->second) return false;
    }
    if (sample.time_ns < from || sample.time_ns >= to) return false;
    if (filter.no_idle && is_idle(sample.stack)) return false;
    return true;
  };
  std::vector<Sample>& samples = profile->mutable_samples();
  const size_t before = samples.size();
  samples.erase(std::remove_if(samples.begin(), samples.end(),
                               [&](const Sample& sample) { return !keep(sample); }),
                samples.end());
  stats.kept = samples.size();
  stats.dropped = before - samples.size();
  return stats;
}

}  // namespace profcpu::fold
