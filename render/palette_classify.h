// Multi-palettes: flamegraph.pl's java, js, perl, wakeup and chain themes, and
// profcpu's dotnet theme, colour each frame with one of the single-hue
// palettes picked from its name and its stackcollapse annotation ("_[k]"
// kernel, "_[j]" JIT, "_[i]" inlined, "_[w]" waker, and profcpu's "_[p]"
// precompiled). Annotations are only there when the stacks were folded with
// them (profcpu fold --all, stackcollapse-perf.pl --all); without them the
// themes fall back on what the names look like, as flamegraph.pl does.
#ifndef PROFCPU_RENDER_PALETTE_CLASSIFY_H_
#define PROFCPU_RENDER_PALETTE_CLASSIFY_H_

#include "absl/strings/string_view.h"
#include "render/palette.h"

namespace profcpu::render {

// The palette that colours `name`: for a multi-palette, the hue its rules
// pick; any other palette is returned unchanged.
Palette ResolvePalette(Palette palette, absl::string_view name);

// The kinds of frame the dotnet theme tells apart, and their hues:
//   kernel        orange  ("_[k]")
//   managed JIT   green   ("_[j]"; CoreCLR method names "[Assembly] Ns.Type::Method",
//                          stubs, frames in /tmp/perf-PID.map)
//   precompiled   blue    ("_[p]"; names tagged [PreJIT]; code run straight from
//                          a ReadyToRun image, shown as "[Name.dll]")
//   native C++    yellow  (other names with "::", e.g. libcoreclr's)
//   native        red     (everything else: C libraries, the comm)
enum class DotnetFrameKind { kKernel, kJit, kPrecompiled, kNativeCpp, kNative };
DotnetFrameKind ClassifyDotnetFrame(absl::string_view name);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_PALETTE_CLASSIFY_H_
