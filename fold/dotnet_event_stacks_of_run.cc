#include "fold/dotnet_event_stacks_of_run.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

namespace profcpu::fold {
namespace {

// Each process's name as the CPU profile's folded stacks show it: its main
// thread's (tid == pid) comm, else the name of its first sampled thread,
// else the start of its command line (a process with no CPU sample).
absl::flat_hash_map<uint32_t, std::string> ProcessNames(const Profile& profile,
                                                        const RecordingSummary& summary) {
  absl::flat_hash_map<uint32_t, std::string> names;
  absl::flat_hash_set<uint32_t> from_main_thread;
  for (const Sample& s : profile.samples()) {
    if (from_main_thread.contains(s.pid)) continue;
    if (s.tid == s.pid) {
      names[s.pid] = profile.string(s.comm);
      from_main_thread.insert(s.pid);
    } else {
      names.try_emplace(s.pid, profile.string(s.comm));
    }
  }
  for (const recording::ProcessInfo& process : summary.processes) {
    absl::string_view program = process.command_line;
    program = program.substr(0, program.find_first_of(std::string(" \0", 2)));
    program = program.substr(program.find_last_of('/') + 1);
    // The kernel's comm holds 15 bytes.
    if (!program.empty()) names.try_emplace(process.pid, std::string(program.substr(0, 15)));
  }
  return names;
}

}  // namespace

DotnetEventProfiles ReadDotnetEventStacksOfRun(const std::string& dir,
                                               symbolize::JitCodeHistory* jit, BuiltProfile* built,
                                               base::RunLog* log) {
  const absl::flat_hash_map<uint32_t, std::string> names =
      ProcessNames(built->profile, built->summary);
  DotnetEventProfiles stacks = ReadDotnetEventStacks(
      dir, jit,
      [&names](uint32_t pid) {
        auto it = names.find(pid);
        return it == names.end() ? std::string() : it->second;
      },
      log);
  CountDotnetEventsDropped(built->summary.dotnet_runtimes, &stacks);
  if (stacks.requests.empty() && stacks.known_names.size() == 0) return stacks;
  absl::flat_hash_set<symbolize::CodeLocation> requested;
  requested.reserve(built->requests.size());
  for (const symbolize::SymbolRequest& r : built->requests) requested.insert(r.location);
  for (symbolize::SymbolRequest& r : stacks.requests) {
    if (requested.insert(r.location).second) built->requests.push_back(std::move(r));
  }
  stacks.requests.clear();
  for (const auto& [location, name] : stacks.known_names.entries()) {
    built->known_names.Insert(location, name);
  }
  return stacks;
}

void FilterDotnetEventProfiles(const ProfileFilter& filter, const RecordingSummary& summary,
                               DotnetEventProfiles* stacks) {
  ProfileFilter narrowed;
  narrowed.pids = filter.pids;
  narrowed.from_s = filter.from_s;
  narrowed.to_s = filter.to_s;
  narrowed.start_ns = summary.header.start_time_ns;
  if (narrowed.empty()) return;
  for (DotnetEventProfile& p : stacks->profiles) {
    FilterProfile(narrowed, &p.profile);
    p.events = p.profile.samples().size();
    p.weight = 0;
    for (const Sample& s : p.profile.samples()) p.weight += s.period;
  }
}

}  // namespace profcpu::fold
