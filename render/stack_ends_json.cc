#include "render/stack_ends_json.h"

namespace profcpu::render {

nlohmann::ordered_json StackEndsJson(const fold::RecordingSummary& s) {
  const fold::StackEnds& ends = s.stack_ends;
  nlohmann::ordered_json by_module = nlohmann::ordered_json::object();
  uint64_t elsewhere = 0;
  for (size_t i = 0; i < ends.cut_by_module.size(); ++i) {
    const auto& [module, count] = ends.cut_by_module[i];
    if (i < kCutModulesShown) {
      by_module[module] = count;
    } else {
      elsewhere += count;
    }
  }
  nlohmann::ordered_json j = {{"cut_short", ends.cut_short}, {"cut_short_by_module", by_module}};
  if (elsewhere > 0) j["cut_short_elsewhere"] = elsewhere;
  // -callgraph fp+cfi: chains given frames back from their stack copy.
  if (s.header.callgraph == "fp+cfi") j["repaired"] = s.stacks_repaired;
  j["at_depth_limit"] = s.depth_limit_stacks;
  return j;
}

}  // namespace profcpu::render
