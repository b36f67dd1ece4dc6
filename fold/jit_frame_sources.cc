#include "fold/jit_frame_sources.h"

#include <vector>

namespace profcpu::fold {

JitFrameSources CountJitFrameSources(
    const Profile& profile,
    const std::function<std::string(const symbolize::CodeLocation&)>& source_of) {
  // Per location: its source's index in `sources`, or -1 when it is not a
  // named JIT frame.
  std::vector<int32_t> source_index(profile.location_count(), -1);
  std::vector<std::string> sources;
  for (size_t i = 0; i < source_index.size(); ++i) {
    const symbolize::CodeLocation& code = profile.location(static_cast<uint32_t>(i)).code;
    if (code.kind != symbolize::CodeKind::kProcess) continue;
    const auto* named = profile.symbols().Find(code);
    if (named == nullptr || named->frames.empty()) continue;
    std::string source = source_of(code);
    if (source.empty()) continue;
    size_t n = 0;
    while (n < sources.size() && sources[n] != source) ++n;
    if (n == sources.size()) sources.push_back(std::move(source));
    source_index[i] = static_cast<int32_t>(n);
  }
  JitFrameSources counts;
  if (sources.empty()) return counts;
  for (const auto& sample : profile.samples()) {
    for (uint32_t location : profile.stack(sample.stack)) {
      if (source_index[location] < 0) continue;
      ++counts[profile.location(location).code.space][sources[source_index[location]]];
    }
  }
  return counts;
}

}  // namespace profcpu::fold
