#include "fold/stack_ends.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fold/recording_summary.h"

namespace profcpu::fold {
namespace {

// A module by its file name ("libcoreclr.so"); "[unknown]", "//anon" and
// the like as they are.
std::string ShortModule(const std::string& module) {
  const bool file = module.size() > 1 && module[0] == '/' && module[1] != '/';
  const size_t slash = module.find_last_of('/');
  return file && slash + 1 < module.size() ? module.substr(slash + 1) : module;
}

// The outermost frame's function of a location; "" when it is unnamed.
absl::string_view OutermostFunction(const Profile& profile, uint32_t location) {
  const symbolize::Symbolization* s = profile.symbols().Find(profile.location(location).code);
  if (s == nullptr || s->frames.empty()) return {};
  return s->frames.back().function;
}

bool IsWallRoot(absl::string_view function) {
  return function == kOnCpuFrame || function == kOffCpuFrame;
}

// std::thread's threads: libstdc++ calls _M_run from its thread routine
// (execute_native_thread_routine, a static function: unnamed without
// libstdc++'s debug file) and nothing else calls it. Debian builds libstdc++
// without frame pointers, so the frame-pointer walk stops in that routine;
// all it misses is the routine's own callers, start_thread and clone3.
bool IsStdThreadEntry(const Profile& profile, const std::vector<uint32_t>& stack, size_t outer) {
  if (outer < 2 || !OutermostFunction(profile, stack[outer - 1]).empty()) return false;
  const symbolize::Symbolization* s = profile.symbols().Find(profile.location(stack[outer - 1]).code);
  if (s == nullptr || !absl::StrContains(s->module, "/libstdc++.so")) return false;
  const absl::string_view run = OutermostFunction(profile, stack[outer - 2]);
  return absl::StartsWith(run, "std::thread::_State_impl<") && absl::StrContains(run, "::_M_run");
}

}  // namespace

bool IsThreadRoot(absl::string_view function) {
  // "CorUnix::CPalThread::ThreadEntry(void*)" as a demangler names it.
  const size_t paren = function.find('(');
  if (paren != absl::string_view::npos && paren > 0) function = function.substr(0, paren);
  return std::find(std::begin(kThreadRoots), std::end(kThreadRoots), function) !=
         std::end(kThreadRoots);
}

StackEnds CountStackEnds(const Profile& profile) {
  StackEnds ends;
  // Per stack, once: -1 whole, else the index of the module it stopped in.
  std::vector<int32_t> stopped_in(profile.stack_count(), -2);  // -2: not looked at yet
  std::vector<std::string> modules;
  std::vector<uint64_t> counts;
  absl::flat_hash_map<std::string, int32_t> module_index;
  for (const Sample& sample : profile.samples()) {
    ++ends.samples;
    int32_t& stop = stopped_in[sample.stack];
    if (stop == -2) {
      const std::vector<uint32_t>& stack = profile.stack(sample.stack);  // leaf first
      size_t outer = stack.size();
      while (outer > 0 && IsWallRoot(OutermostFunction(profile, stack[outer - 1]))) --outer;
      if (outer > 0 && (IsThreadRoot(OutermostFunction(profile, stack[outer - 1])) ||
                        IsStdThreadEntry(profile, stack, outer))) {
        stop = -1;
      } else {
        std::string module = "[unknown]";
        if (outer > 0) {
          const symbolize::Symbolization* s =
              profile.symbols().Find(profile.location(stack[outer - 1]).code);
          if (s != nullptr && !s->module.empty()) module = s->module;
        }
        auto [it, inserted] = module_index.try_emplace(module, static_cast<int32_t>(modules.size()));
        if (inserted) {
          modules.push_back(module);
          counts.push_back(0);
        }
        stop = it->second;
      }
    }
    if (stop < 0) continue;
    ++ends.cut_short;
    ++counts[stop];
  }
  for (size_t i = 0; i < modules.size(); ++i) ends.cut_by_module.emplace_back(modules[i], counts[i]);
  std::sort(ends.cut_by_module.begin(), ends.cut_by_module.end(),
            [](const auto& a, const auto& b) {
              return a.second != b.second ? a.second > b.second : a.first < b.first;
            });
  return ends;
}

std::string DescribeCutStacks(const StackEnds& ends, size_t shown) {
  if (ends.cut_short == 0) return "";
  std::string text = absl::StrCat(", ", ends.cut_short, " stacks cut short (");
  for (size_t i = 0; i < ends.cut_by_module.size() && i < shown; ++i) {
    const auto& [module, count] = ends.cut_by_module[i];
    absl::StrAppend(&text, i == 0 ? "" : ", ", count, " in ", ShortModule(module));
  }
  if (ends.cut_by_module.size() > shown) {
    uint64_t rest = 0;
    for (size_t i = shown; i < ends.cut_by_module.size(); ++i) rest += ends.cut_by_module[i].second;
    absl::StrAppend(&text, ", ", rest, " elsewhere");
  }
  text.push_back(')');
  return text;
}

}  // namespace profcpu::fold
