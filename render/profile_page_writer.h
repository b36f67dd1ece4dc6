// profile.html: the page (render/profile_page/) with a run's PageData
// embedded, in one file that opens from disk with no request leaving it.
// docs/profile-page.md gives the document and the data's encoding.
#ifndef PROFCPU_RENDER_PROFILE_PAGE_WRITER_H_
#define PROFCPU_RENDER_PROFILE_PAGE_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "archive/deflate_parallel.h"
#include "recording/run_folder.h"
#include "render/profile_page_data.h"

namespace profcpu::render {

using recording::kProfilePageFile;  // "profile.html"

// What the page says about the run besides its samples (META).
// A runtime event on the page's time axis (its events lane): a .NET GC
// pause or burst of exceptions.
struct PageEvent {
  double t = 0;           // seconds from time 0
  double d = 0;           // seconds it lasted
  std::string kind;       // "gc", "exception"
  uint32_t pid = 0;
  std::string label;
  // The thread the runtime reported it from (the nettrace event's thread
  // id: the one that suspended the runtime, or threw), as the process sees
  // it (its pid namespace's); 0 when unknown.
  uint64_t tid = 0;
};

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
  std::vector<PageEvent> events;
  std::string generator;
  // The first view when the page's URL has no fragment, in the fragment's
  // syntax ("from=60&to=120&bfrom=0&bto=60"); empty: the whole run.
  std::string view;
};

// Another profile of the same run the page can switch to (the .NET
// allocations, lock waits and exceptions), on the same time axis: its data
// in an element of its own ("profcpu-data-KEY"), listed in META.profiles.
struct PageView {
  std::string key;          // [a-z_]+, e.g. "alloc"; the URL fragment's profile=KEY
  std::string label;        // the switch's text, e.g. "Allocations"
  std::string count_name;   // what a weight counts: "bytes", "microseconds", "throws"
  std::string description;  // one line for the header
  PageData data;
};

// How the data elements are compressed. Either way they inflate to the same
// bytes (EncodePageData's); only the compressed bytes differ.
struct PageCompression {
  // 1: zlib at level 6 on the calling thread, the page's first encoder (kept
  // for comparisons: PROFCPU_THREADS=1); more: libdeflate in pieces on up to
  // this many threads (archive/deflate_parallel.h).
  size_t threads = 1;
};

// What writing the page cost, for profcpu.log.
struct PageWriteWork {
  // Over all data elements; with several threads its wall_s is the time
  // the writer's thread spent compressing pieces itself or waiting for them.
  archive::DeflateWork deflate;
  double encode_s = 0;  // encoding the data, less that time
  double base64_s = 0;
};

// The data section as docs/profile-page.md lays it out, uncompressed (the
// page itself encodes it piece by piece as it compresses it).
std::string EncodePageData(const PageData& data);

// The whole document; with `views`, a switch between the main profile and
// each of them. `work` may be null.
absl::StatusOr<std::string> RenderProfilePage(const PageData& data, const PageMeta& meta,
                                              const std::vector<PageView>& views = {},
                                              const PageCompression& compression = {},
                                              PageWriteWork* work = nullptr);

// The same document written to `path` as it is made, never held whole, and
// `data` released once encoded (on deep stacks the page is tens of
// megabytes and its tree more): what `postprocess` writes. The file is
// created once the data is encoded. `work` may be null.
absl::Status WriteProfilePageFile(PageData data, const PageMeta& meta,
                                  const std::vector<PageView>& views,
                                  const PageCompression& compression, const std::string& path,
                                  PageWriteWork* work = nullptr);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_PROFILE_PAGE_WRITER_H_
