// profile.html: the page (render/profile_page/) with a run's PageData
// embedded, in one file that opens from disk with no request leaving it.
// docs/profile-page.md gives the document and the data's encoding.
#ifndef PROFCPU_RENDER_PROFILE_PAGE_WRITER_H_
#define PROFCPU_RENDER_PROFILE_PAGE_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "render/profile_page_data.h"

namespace profcpu::render {

inline constexpr char kProfilePageFile[] = "profile.html";

// What the page says about the run besides its samples (META).
struct PageMeta {
  std::string title = "CPU Profile";
  std::string subtitle;
  std::string mode = "cpu";           // cpu, offcpu, wall
  std::string count_name = "samples";  // what a weight counts
  std::string palette = "hot";
  std::string cool_subtree;
  int64_t start_realtime_ns = 0;
  // How long collection ran (the page's time axis spans at least this and
  // the last sample's time); 0 if unknown.
  double duration_s = 0;
  // 0: exact sample times; else how coarse they are (BPF counts per second).
  double time_resolution_s = 0;
  std::string generator;
};

// The data section as docs/profile-page.md lays it out, uncompressed.
std::string EncodePageData(const PageData& data);

// The whole document.
absl::StatusOr<std::string> RenderProfilePage(const PageData& data, const PageMeta& meta);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_PROFILE_PAGE_WRITER_H_
