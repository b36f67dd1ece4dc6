#include "render/profile_page_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "base/status_macros.h"
#include "base/unique_fd.h"
#include "nlohmann/json.hpp"
#include "archive/deflate.h"
#include "render/profile_page_assets.h"
#include "render/xml_text.h"

namespace profcpu::render {
namespace {

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void AppendZigzag(int64_t value, std::string* out) {
  AppendVarint((static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63), out);
}

void AppendColorBytes(const Rgb& color, std::string* out) {
  out->push_back(static_cast<char>(color.r));
  out->push_back(static_cast<char>(color.g));
  out->push_back(static_cast<char>(color.b));
}

// The encoders below call drain() after each item they append, so that
// encoded bytes can leave `out` as they are made (to be compressed).
template <typename Drain>
void AppendNames(const PageData& data, std::string* out, Drain& drain) {
  AppendVarint(data.names.size(), out);
  for (const PageName& name : data.names) {
    AppendVarint(name.text.size(), out);
    out->append(name.text);
    drain();
  }
  for (const PageName& name : data.names) {
    AppendColorBytes(name.color, out);
    drain();
  }
  for (const PageName& name : data.names) {
    AppendColorBytes(name.cool, out);
    drain();
  }
  for (const PageName& name : data.names) {
    out->push_back(static_cast<char>(name.flags));
    drain();
  }
}

// Column by column: each column's numbers are alike, so deflate finds them.
template <typename Drain>
void AppendSamples(const PageData& data, std::string* out, Drain& drain) {
  AppendVarint(data.samples.size(), out);
  AppendVarint(data.weighted ? 1 : 0, out);
  uint64_t previous = 0;
  for (const PageSample& sample : data.samples) {
    AppendZigzag(static_cast<int64_t>(sample.time_us - previous), out);
    previous = sample.time_us;
    drain();
  }
  for (const PageSample& sample : data.samples) {
    AppendVarint(sample.node, out);
    drain();
  }
  for (const PageSample& sample : data.samples) {
    AppendVarint(sample.thread, out);
    drain();
  }
  if (data.weighted) {
    for (const PageSample& sample : data.samples) {
      AppendVarint(sample.weight, out);
      drain();
    }
  }
}

// The data section as docs/profile-page.md lays it out.
template <typename Drain>
void AppendPageData(const PageData& data, std::string* out, Drain& drain) {
  out->append("PCPG");
  AppendVarint(1, out);
  AppendNames(data, out, drain);
  AppendVarint(data.nodes.size(), out);
  data.nodes.ForEach([out, &drain](size_t i, const PageNode& node) {
    if (i == 0) return;  // the root is implied
    AppendVarint(node.parent, out);
    AppendVarint(node.name, out);
    drain();
  });
  AppendVarint(data.threads.size(), out);
  for (const PageThread& thread : data.threads) {
    AppendVarint(thread.pid, out);
    AppendVarint(thread.tid, out);
    AppendVarint(thread.name, out);
    drain();
  }
  AppendSamples(data, out, drain);
}

std::string Clean(absl::string_view text) {
  std::string clean;
  AppendCleanText(text, &clean);
  return clean;
}

// JSON that cannot end its <script> element or be read as markup: < > & and
// the two line separators JavaScript once rejected become \u escapes (they
// can only occur inside strings).
std::string ScriptSafeJson(const nlohmann::json& json) {
  const std::string text = json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out.append("\\u003c");
    } else if (c == '>') {
      out.append("\\u003e");
    } else if (c == '&') {
      out.append("\\u0026");
    } else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
      out.append(text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029");
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The main profile's name on the switch, from the run's mode.
const char* MainLabel(const std::string& mode) {
  if (mode == "offcpu") return "Off-CPU";
  if (mode == "wall") return "Wall clock";
  return "CPU";
}

std::string DataElementId(const std::string& key) { return absl::StrCat("profcpu-data-", key); }

// META.profiles: the main profile first, then each view, with what the
// switch and each view's header need before its data is decoded.
nlohmann::json ProfilesJson(const PageData& data, const PageMeta& meta,
                            const std::vector<PageView>& views) {
  nlohmann::json profiles = nlohmann::json::array();
  profiles.push_back({{"key", "cpu"}, {"label", MainLabel(meta.mode)},
                      {"count_name", meta.count_name}, {"samples", data.samples.size()},
                      {"total_weight", data.total_weight}, {"data", "profcpu-data"}});
  for (const PageView& view : views) {
    profiles.push_back({{"key", view.key}, {"label", Clean(view.label)},
                        {"count_name", view.count_name}, {"description", Clean(view.description)},
                        {"samples", view.data.samples.size()},
                        {"total_weight", view.data.total_weight},
                        {"time_resolution_s", 0}, {"data", DataElementId(view.key)}});
  }
  return profiles;
}

// Keys name elements and fragment values: plain words only.
absl::Status CheckViewKeys(const std::vector<PageView>& views) {
  for (const PageView& view : views) {
    bool plain = !view.key.empty() && view.key != "cpu";
    for (char c : view.key) plain = plain && ((c >= 'a' && c <= 'z') || c == '_');
    if (!plain) return absl::InvalidArgumentError(absl::StrCat("bad page view key \"", view.key, "\""));
  }
  return absl::OkStatus();
}

double ThreadCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A data element's payload: its encoded data, deflated when that is smaller,
// in parts written one after the other.
struct DataPayload {
  std::string id;
  size_t raw_bytes = 0;
  bool deflated = false;
  std::vector<std::string> parts;
  size_t size() const {
    size_t total = 0;
    for (const std::string& part : parts) total += part.size();
    return total;
  }
};

void AddDeflateWork(const archive::DeflateWork& deflate, PageWriteWork* work) {
  work->deflate.tasks += deflate.tasks;
  work->deflate.threads = std::max(work->deflate.threads, deflate.threads);
  work->deflate.wall_s += deflate.wall_s;
  work->deflate.task_cpu_s += deflate.task_cpu_s;
  work->deflate.longest_task_s = std::max(work->deflate.longest_task_s, deflate.longest_task_s);
}

// The data deflated as it is encoded: each full piece goes to a
// ZlibPieceStream, so the encoded data is never held whole (on deep stacks
// it is tens of megabytes) and its compression overlaps its encoding. Data
// of one piece is deflated when that is smaller, as a whole.
absl::StatusOr<DataPayload> EncodeStreamed(const PageData& data, const std::string& id,
                                           const PageCompression& compression,
                                           PageWriteWork* work) {
  const auto start = std::chrono::steady_clock::now();
  DataPayload payload;
  payload.id = id;
  archive::ZlibPieceStream stream(compression.threads);
  const size_t piece = stream.piece_bytes();
  std::string out;
  out.reserve(piece + (piece >> 4));
  auto drain = [&stream, &out, &payload, piece] {
    if (out.size() <= piece) return;
    // Past a piece (by one item): the piece leaves, the rest starts the next.
    std::string rest(out, piece);
    out.resize(piece);
    stream.Add(std::move(out));
    payload.raw_bytes += piece;
    out = std::move(rest);
    out.reserve(piece + (piece >> 4));
  };
  AppendPageData(data, &out, drain);
  payload.raw_bytes += out.size();
  archive::DeflateWork deflate;
  if (stream.pieces() == 0) {
    PROFCPU_ASSIGN_OR_RETURN(payload.parts,
                             archive::DeflateZlibInPieces(out, compression.threads, &deflate));
    payload.deflated = payload.size() < out.size();
    if (!payload.deflated) {
      payload.parts.clear();
      payload.parts.push_back(std::move(out));
    }
  } else {
    // Deflate never grows data this size of varints (it only could by a
    // few bytes per 64 KiB on noise): kept deflated, the raw is gone.
    PROFCPU_ASSIGN_OR_RETURN(payload.parts, stream.Finish(std::move(out), &deflate));
    payload.deflated = true;
  }
  AddDeflateWork(deflate, work);
  work->encode_s += std::max(0.0, SecondsSince(start) - deflate.wall_s);
  return payload;
}

absl::StatusOr<DataPayload> EncodePayload(const PageData& data, const std::string& id,
                                          const PageCompression& compression,
                                          PageWriteWork* work) {
  if (compression.threads > 1) return EncodeStreamed(data, id, compression, work);
  // zlib, as the page's first encoder: the whole data encoded, then deflated.
  auto start = std::chrono::steady_clock::now();
  DataPayload payload;
  payload.id = id;
  std::string raw = EncodePageData(data);
  payload.raw_bytes = raw.size();
  work->encode_s += SecondsSince(start);
  start = std::chrono::steady_clock::now();
  const double cpu_start = ThreadCpuSeconds();
  PROFCPU_ASSIGN_OR_RETURN(std::string compressed,
                           archive::Deflate(raw, archive::DeflateContainer::kZlib));
  // CPU time, as the pieces' (archive/deflate_parallel.h) are counted.
  const double cpu = ThreadCpuSeconds() - cpu_start;
  archive::DeflateWork deflate;
  deflate.tasks = deflate.threads = 1;
  deflate.wall_s = SecondsSince(start);
  deflate.task_cpu_s = deflate.longest_task_s = cpu;
  AddDeflateWork(deflate, work);
  payload.parts.push_back(std::move(compressed));
  payload.deflated = payload.size() < raw.size();
  if (!payload.deflated) {
    payload.parts.clear();
    payload.parts.push_back(std::move(raw));
  }
  return payload;
}

// Base64 of parts written one after the other, as if they were one string;
// each part is released once written, and `flush` called after it.
template <typename Flush>
absl::Status AppendBase64(std::vector<std::string>* parts, std::string* out, Flush& flush) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  auto append_group = [out](uint32_t group) {
    const char digits[4] = {kDigits[group >> 18], kDigits[(group >> 12) & 63],
                            kDigits[(group >> 6) & 63], kDigits[group & 63]};
    out->append(digits, 4);
  };
  uint32_t group = 0;  // up to 3 bytes not yet written
  int held = 0;
  for (std::string& part : *parts) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(part.data());
    size_t i = 0;
    // A group begun in the previous part, ended by this one's first bytes.
    for (; held != 0 && i < part.size(); ++i) {
      group = (group << 8) | bytes[i];
      if (++held == 3) {
        append_group(group);
        group = 0;
        held = 0;
      }
    }
    // Whole groups, written straight into the grown output.
    const size_t whole = (part.size() - i) / 3;
    size_t at = out->size();
    out->resize(at + whole * 4);
    char* digits = out->data();
    for (size_t end = i + whole * 3; i < end; i += 3, at += 4) {
      const uint32_t triple = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
      digits[at] = kDigits[triple >> 18];
      digits[at + 1] = kDigits[(triple >> 12) & 63];
      digits[at + 2] = kDigits[(triple >> 6) & 63];
      digits[at + 3] = kDigits[triple & 63];
    }
    for (; i < part.size(); ++i, ++held) group = (group << 8) | bytes[i];
    std::string().swap(part);
    PROFCPU_RETURN_IF_ERROR(flush());
  }
  if (held == 1) {
    group <<= 16;
    out->append({kDigits[group >> 18], kDigits[(group >> 12) & 63], '=', '='});
  } else if (held == 2) {
    group <<= 8;
    out->append({kDigits[group >> 18], kDigits[(group >> 12) & 63], kDigits[(group >> 6) & 63], '='});
  }
  return absl::OkStatus();
}

template <typename Flush>
absl::Status AppendDataElement(DataPayload& payload, std::string* page, Flush& flush) {
  absl::StrAppend(page, "<script type=\"application/octet-stream\" id=\"", payload.id,
                  "\" data-encoding=\"", payload.deflated ? "deflate" : "none", "\" data-bytes=\"",
                  payload.raw_bytes, "\">");
  PROFCPU_RETURN_IF_ERROR(AppendBase64(&payload.parts, page, flush));
  page->append("</script>\n");
  return flush();
}

std::string MetaJson(const PageData& data, const PageMeta& meta,
                     const std::vector<PageView>& views) {
  nlohmann::json events = nlohmann::json::array();
  for (const PageEvent& e : meta.events) {
    events.push_back({{"t", e.t}, {"d", e.d}, {"kind", Clean(e.kind)}, {"pid", e.pid},
                      {"tid", e.tid}, {"label", Clean(e.label)}});
  }
  nlohmann::json json = {
      {"version", 1},
      {"title", Clean(meta.title)},
      {"subtitle", Clean(meta.subtitle)},
      {"mode", meta.mode},
      {"count_name", meta.count_name},
      {"palette", meta.palette},
      {"cool_subtree", Clean(meta.cool_subtree)},
      {"start_realtime_ns", absl::StrCat(meta.start_realtime_ns)},
      {"duration_s", std::max(meta.duration_s, static_cast<double>(data.last_time_us) / 1e6)},
      {"time_resolution_s", meta.time_resolution_s},
      {"samples", data.samples.size()},
      {"total_weight", data.total_weight},
      {"events", std::move(events)},
      {"generator", Clean(meta.generator)},
  };
  if (!meta.view.empty()) json["view"] = Clean(meta.view);
  if (!views.empty()) json["profiles"] = ProfilesJson(data, meta, views);
  return ScriptSafeJson(json);
}

}  // namespace

std::string EncodePageData(const PageData& data) {
  std::string out;
  auto keep = [] {};
  AppendPageData(data, &out, keep);
  return out;
}

namespace {

// The page in order into `page`, `flush` called after each large part (it
// may take the page's bytes so far; if it does not, the page is sized
// once); `release`, if not null, is `data`, released once encoded.
template <typename Flush>
absl::Status RenderPage(const PageData& data, PageData* release, const PageMeta& meta,
                        const std::vector<PageView>& views, const PageCompression& compression,
                        PageWriteWork* work, std::string* page, bool flush_takes, Flush& flush) {
  PROFCPU_RETURN_IF_ERROR(CheckViewKeys(views));
  PageWriteWork unused;
  if (work == nullptr) work = &unused;
  const std::string meta_json = MetaJson(data, meta, views);
  // Each element's data is encoded and compressed first (EncodePayload),
  // then the page made.
  std::vector<DataPayload> payloads;
  PROFCPU_ASSIGN_OR_RETURN(payloads.emplace_back(),
                           EncodePayload(data, "profcpu-data", compression, work));
  if (release != nullptr) *release = PageData();
  for (const PageView& view : views) {
    PROFCPU_ASSIGN_OR_RETURN(payloads.emplace_back(),
                             EncodePayload(view.data, DataElementId(view.key), compression, work));
  }
  size_t base64_bytes = 0;
  for (const DataPayload& payload : payloads) base64_bytes += (payload.size() + 2) / 3 * 4 + 256;
  if (!flush_takes) {
    page->reserve(ProfilePageStyle().size() + ProfilePageScript().size() +
                  ProfilePageBody().size() + meta_json.size() + base64_bytes + 4096);
  }
  // No source but the page itself: no request can leave it.
  absl::StrAppend(page,
                  "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                  "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<meta name=\"generator\" content=\"");
  AppendXmlText(meta.generator, page);
  page->append("\">\n<title>");
  AppendXmlText(meta.subtitle.empty() ? meta.title : absl::StrCat(meta.title, ": ", meta.subtitle),
                page);
  absl::StrAppend(page, "</title>\n<style>\n", ProfilePageStyle(), "</style>\n</head>\n<body>\n",
                  ProfilePageBody(), "\n<script type=\"application/json\" id=\"profcpu-meta\">",
                  meta_json, "</script>\n");
  PROFCPU_RETURN_IF_ERROR(flush());
  const auto start = std::chrono::steady_clock::now();
  for (DataPayload& payload : payloads) {
    PROFCPU_RETURN_IF_ERROR(AppendDataElement(payload, page, flush));
  }
  work->base64_s += SecondsSince(start);
  absl::StrAppend(page, "<script>\n", ProfilePageScript(), "</script>\n</body></html>\n");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> RenderProfilePage(const PageData& data, const PageMeta& meta,
                                              const std::vector<PageView>& views,
                                              const PageCompression& compression,
                                              PageWriteWork* work) {
  std::string page;
  auto keep = [] { return absl::OkStatus(); };
  PROFCPU_RETURN_IF_ERROR(
      RenderPage(data, nullptr, meta, views, compression, work, &page, false, keep));
  return page;
}

absl::Status WriteProfilePageFile(PageData data, const PageMeta& meta,
                                  const std::vector<PageView>& views,
                                  const PageCompression& compression, const std::string& path,
                                  PageWriteWork* work) {
  // Created once the data is encoded (a failure there leaves no file); the
  // page goes to it a megabyte or so at a time.
  base::UniqueFd fd;
  std::string page;
  auto flush = [&fd, &page, &path](bool last = false) -> absl::Status {
    if (page.size() < (size_t{1} << 20) && !last) return absl::OkStatus();
    if (!fd.valid()) {
      fd = base::UniqueFd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      if (!fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("create ", path));
    }
    PROFCPU_RETURN_IF_ERROR(base::WriteAll(fd.get(), page, path));
    page.clear();
    return absl::OkStatus();
  };
  const PageData& encoded = data;
  PROFCPU_RETURN_IF_ERROR(
      RenderPage(encoded, &data, meta, views, compression, work, &page, true, flush));
  PROFCPU_RETURN_IF_ERROR(flush(true));
  if (::close(fd.Release()) != 0) return base::ErrnoStatus(errno, absl::StrCat("close ", path));
  return absl::OkStatus();
}

}  // namespace profcpu::render
