// The page's own files (render/profile_page/), embedded by the build
// (render/embed_page.cmake): the body's markup, the style sheet, and the
// script (every js/*.js in name order inside one function scope).
#ifndef PROFCPU_RENDER_PROFILE_PAGE_ASSETS_H_
#define PROFCPU_RENDER_PROFILE_PAGE_ASSETS_H_

#include "absl/strings/string_view.h"

namespace profcpu::render {

absl::string_view ProfilePageBody();
absl::string_view ProfilePageStyle();
absl::string_view ProfilePageScript();

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_PROFILE_PAGE_ASSETS_H_
