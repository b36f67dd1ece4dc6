// metadata.json's "stacks" entry: whether the samples' stacks reach their
// thread's root (fold/stack_ends.h), where the ones cut short stopped, and
// how many the replay repaired or found at the kernel's depth limit. None
// of these samples is lost: every one is in the outputs.
#ifndef PROFCPU_RENDER_STACK_ENDS_JSON_H_
#define PROFCPU_RENDER_STACK_ENDS_JSON_H_

#include <cstddef>

#include <nlohmann/json.hpp>

#include "fold/recording_summary.h"

namespace profcpu::render {

// The modules listed under "cut_short_by_module", most samples first.
inline constexpr size_t kCutModulesShown = 5;

nlohmann::ordered_json StackEndsJson(const fold::RecordingSummary& summary);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_STACK_ENDS_JSON_H_
