// Everything in a flame graph SVG but the frames: the XML prologue, the
// background gradient, styles, the script, the title, the details line and
// the Reset Zoom / Search / ic / Matched controls.
#ifndef PROFCPU_RENDER_SVG_DOCUMENT_H_
#define PROFCPU_RENDER_SVG_DOCUMENT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "render/flamegraph_layout.h"
#include "render/flamegraph_options.h"

namespace profcpu::render {

// Writes up to and including the opening tag of <g id="frames">, whose data-*
// attributes hand the layout constants to the script. Options must be valid.
void WriteDocumentStart(const FlameGraphLayout& layout, const FlameGraphOptions& options,
                        absl::string_view count_name, std::string* out);

// Closes what WriteDocumentStart opened.
void WriteDocumentEnd(std::string* out);

// A complete, small SVG with the title and "No <count name>" in place of frames.
void WriteNoSamplesDocument(const FlameGraphOptions& options, absl::string_view count_name,
                            std::string* out);

// Rough size of what WriteDocumentStart writes, for reserving the buffer.
size_t DocumentStartSizeHint();

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_SVG_DOCUMENT_H_
