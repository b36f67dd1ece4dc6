// The JavaScript embedded in every flame graph: hover details, click to zoom,
// regular-expression search, and zoom/search state kept in the URL.
#ifndef PROFCPU_RENDER_FLAMEGRAPH_SCRIPT_H_
#define PROFCPU_RENDER_FLAMEGRAPH_SCRIPT_H_

#include "absl/strings/string_view.h"

namespace profcpu::render {

// Constant text, safe to place inside <![CDATA[ ]]> (it never contains "]]>").
// It takes every setting from the document (data-* attributes of #frames), so
// no option value is ever spliced into code.
absl::string_view FlameGraphScript();

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_FLAMEGRAPH_SCRIPT_H_
