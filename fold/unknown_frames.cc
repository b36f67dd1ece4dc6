#include "fold/unknown_frames.h"

#include <algorithm>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace profcpu::fold {
namespace {

// A mapped file ("/usr/lib/libfoo.so"), not "//anon", "[unknown]" and the like.
bool IsFile(const std::string& module) {
  return module.size() > 1 && module[0] == '/' && module[1] != '/';
}

}  // namespace

UnknownFrames CountUnknownFrames(const Profile& profile) {
  // Per location: its module's index in `modules`, or -1 when it is named.
  std::vector<int32_t> module_of(profile.location_count(), -1);
  std::vector<std::string> modules;
  absl::flat_hash_map<std::string, int32_t> module_index;
  for (size_t i = 0; i < module_of.size(); ++i) {
    const auto* s = profile.symbols().Find(profile.location(static_cast<uint32_t>(i)).code);
    if (s != nullptr && !s->frames.empty()) continue;
    const std::string module = s == nullptr || s->module.empty() ? "[unknown]" : s->module;
    auto [it, inserted] = module_index.try_emplace(module, static_cast<int32_t>(modules.size()));
    if (inserted) modules.push_back(module);
    module_of[i] = it->second;
  }
  // Per module, in one pass over the samples: frames, samples holding one,
  // the most in one sample, and whether all sit near the stack's root.
  struct Tally {
    uint64_t frames = 0, samples = 0, most = 0, in_current = 0;
    size_t current = SIZE_MAX;  // the sample in_current counts for
    bool near_root = true;
  };
  std::vector<Tally> tallies(modules.size());
  UnknownFrames result;
  result.samples = profile.samples().size();
  for (size_t n = 0; n < profile.samples().size(); ++n) {
    const std::vector<uint32_t>& stack = profile.stack(profile.samples()[n].stack);  // leaf first
    for (size_t i = 0; i < stack.size(); ++i) {
      if (module_of[stack[i]] < 0) continue;
      Tally& t = tallies[module_of[stack[i]]];
      if (t.current != n) {
        t.current = n;
        t.in_current = 0;
        ++t.samples;
      }
      t.most = std::max(t.most, ++t.in_current);
      ++t.frames;
      ++result.total;
      if (stack.size() - 1 - i >= kThreadStartDepth) t.near_root = false;
    }
  }
  for (size_t i = 0; i < modules.size(); ++i) {
    if (tallies[i].frames > 0) result.by_module.emplace_back(modules[i], tallies[i].frames);
  }
  std::sort(result.by_module.begin(), result.by_module.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (result.by_module.empty()) return result;
  const Tally& top = tallies[module_index.at(result.by_module.front().first)];
  result.top_samples = top.samples;
  result.top_most_in_a_sample = top.most;
  result.top_at_thread_start = top.near_root;
  return result;
}

void LogUnknownFrames(const UnknownFrames& unknown, base::RunLog* log) {
  if (unknown.by_module.empty()) return;
  constexpr size_t kShown = 8;
  std::string line = "unknown frames by module:";
  bool file = false;
  for (size_t i = 0; i < unknown.by_module.size() && i < kShown; ++i) {
    const auto& [module, count] = unknown.by_module[i];
    absl::StrAppend(&line, i == 0 ? " " : ", ", module, " ", count);
    file = file || IsFile(module);
  }
  if (unknown.by_module.size() > kShown) {
    absl::StrAppend(&line, ", and ", unknown.by_module.size() - kShown, " more modules");
  }
  log->Info(line);
  if (file) {
    log->Info("a library's frames are named by its debug file (same build-id): install its "
              "debug package, or give its directory with -symbols DIR (collect, record or "
              "postprocess)");
  }
}

std::string DescribeUnknownFrames(const UnknownFrames& unknown) {
  std::string text = absl::StrCat(", ", unknown.total, " unknown frames");
  if (unknown.by_module.empty()) return text;
  const auto& [module, count] = unknown.by_module.front();
  // A file by its name; "//anon", "[unknown]" and the like as they are.
  const size_t slash = module.find_last_of('/');
  const std::string name =
      IsFile(module) && slash + 1 < module.size() ? module.substr(slash + 1) : module;
  const std::string where =
      absl::StrCat(count == unknown.total ? "all" : absl::StrCat(count), " in ", name);
  if (!IsFile(module) || unknown.top_most_in_a_sample != 1) {
    absl::StrAppend(&text, " (", where, ")");
    return text;
  }
  // One unnamed frame of a library per sample at most: a library shipped
  // without symbols, not a broken profile. Say so, in proportion.
  const std::string share =
      unknown.top_samples == unknown.samples
          ? std::string("one per sample")
          : absl::StrCat("one in ", unknown.top_samples, " of ", unknown.samples, " samples");
  absl::StrAppend(&text, " (", share, unknown.top_at_thread_start ? ", at thread start, " : ", ",
                  where, ", which has no symbols here: profcpu.log says how to name it)");
  return text;
}

}  // namespace profcpu::fold
