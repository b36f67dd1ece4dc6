#include "render/profile_page_writer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
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

void AppendNames(const PageData& data, std::string* out) {
  AppendVarint(data.names.size(), out);
  for (const PageName& name : data.names) {
    AppendVarint(name.text.size(), out);
    out->append(name.text);
  }
  for (const PageName& name : data.names) AppendColorBytes(name.color, out);
  for (const PageName& name : data.names) AppendColorBytes(name.cool, out);
  for (const PageName& name : data.names) out->push_back(static_cast<char>(name.flags));
}

// Column by column: each column's numbers are alike, so deflate finds them.
void AppendSamples(const PageData& data, std::string* out) {
  AppendVarint(data.samples.size(), out);
  AppendVarint(data.weighted ? 1 : 0, out);
  uint64_t previous = 0;
  for (const PageSample& sample : data.samples) {
    AppendZigzag(static_cast<int64_t>(sample.time_us - previous), out);
    previous = sample.time_us;
  }
  for (const PageSample& sample : data.samples) AppendVarint(sample.node, out);
  for (const PageSample& sample : data.samples) AppendVarint(sample.thread, out);
  if (data.weighted) {
    for (const PageSample& sample : data.samples) AppendVarint(sample.weight, out);
  }
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

absl::StatusOr<DataPayload> EncodePayload(const PageData& data, const std::string& id,
                                          const PageCompression& compression,
                                          PageWriteWork* work) {
  auto start = std::chrono::steady_clock::now();
  DataPayload payload;
  payload.id = id;
  std::string raw = EncodePageData(data);
  payload.raw_bytes = raw.size();
  work->encode_s += SecondsSince(start);
  if (compression.threads <= 1) {
    start = std::chrono::steady_clock::now();
    const double cpu_start = ThreadCpuSeconds();
    PROFCPU_ASSIGN_OR_RETURN(std::string compressed,
                             archive::Deflate(raw, archive::DeflateContainer::kZlib));
    // CPU time, as the pieces' (archive/deflate_parallel.h) are counted.
    const double cpu = ThreadCpuSeconds() - cpu_start;
    work->deflate.tasks += 1;
    work->deflate.threads = std::max<size_t>(work->deflate.threads, 1);
    work->deflate.wall_s += SecondsSince(start);
    work->deflate.task_cpu_s += cpu;
    work->deflate.longest_task_s = std::max(work->deflate.longest_task_s, cpu);
    payload.parts.push_back(std::move(compressed));
  } else {
    archive::DeflateWork deflate;
    PROFCPU_ASSIGN_OR_RETURN(payload.parts,
                             archive::DeflateZlibInPieces(raw, compression.threads, &deflate));
    work->deflate.tasks += deflate.tasks;
    work->deflate.threads = std::max(work->deflate.threads, deflate.threads);
    work->deflate.wall_s += deflate.wall_s;
    work->deflate.task_cpu_s += deflate.task_cpu_s;
    work->deflate.longest_task_s = std::max(work->deflate.longest_task_s, deflate.longest_task_s);
  }
  payload.deflated = payload.size() < raw.size();
  if (!payload.deflated) {
    payload.parts.clear();
    payload.parts.push_back(std::move(raw));
  }
  return payload;
}

// Base64 of parts written one after the other, as if they were one string;
// each part is released once written.
void AppendBase64(std::vector<std::string>* parts, std::string* out) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint32_t group = 0;  // up to 3 bytes not yet written
  int held = 0;
  for (std::string& part : *parts) {
    for (unsigned char byte : part) {
      group = (group << 8) | byte;
      if (++held == 3) {
        const char digits[4] = {kDigits[group >> 18], kDigits[(group >> 12) & 63],
                                kDigits[(group >> 6) & 63], kDigits[group & 63]};
        out->append(digits, 4);
        group = 0;
        held = 0;
      }
    }
    std::string().swap(part);
  }
  if (held == 1) {
    group <<= 16;
    out->append({kDigits[group >> 18], kDigits[(group >> 12) & 63], '=', '='});
  } else if (held == 2) {
    group <<= 8;
    out->append({kDigits[group >> 18], kDigits[(group >> 12) & 63], kDigits[(group >> 6) & 63], '='});
  }
}

void AppendDataElement(DataPayload& payload, std::string* page) {
  absl::StrAppend(page, "<script type=\"application/octet-stream\" id=\"", payload.id,
                  "\" data-encoding=\"", payload.deflated ? "deflate" : "none", "\" data-bytes=\"",
                  payload.raw_bytes, "\">");
  AppendBase64(&payload.parts, page);
  page->append("</script>\n");
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
  std::string out = "PCPG";
  AppendVarint(1, &out);
  AppendNames(data, &out);
  AppendVarint(data.nodes.size(), &out);
  for (size_t i = 1; i < data.nodes.size(); ++i) {
    AppendVarint(data.nodes[i].parent, &out);
    AppendVarint(data.nodes[i].name, &out);
  }
  AppendVarint(data.threads.size(), &out);
  for (const PageThread& thread : data.threads) {
    AppendVarint(thread.pid, &out);
    AppendVarint(thread.tid, &out);
    AppendVarint(thread.name, &out);
  }
  AppendSamples(data, &out);
  return out;
}

absl::StatusOr<std::string> RenderProfilePage(const PageData& data, const PageMeta& meta,
                                              const std::vector<PageView>& views,
                                              const PageCompression& compression,
                                              PageWriteWork* work) {
  PROFCPU_RETURN_IF_ERROR(CheckViewKeys(views));
  PageWriteWork unused;
  if (work == nullptr) work = &unused;
  // Each element's data is encoded and compressed first (the encoded bytes
  // released once compressed), so the page is sized once.
  std::vector<DataPayload> payloads;
  PROFCPU_ASSIGN_OR_RETURN(payloads.emplace_back(),
                           EncodePayload(data, "profcpu-data", compression, work));
  for (const PageView& view : views) {
    PROFCPU_ASSIGN_OR_RETURN(payloads.emplace_back(),
                             EncodePayload(view.data, DataElementId(view.key), compression, work));
  }
  const std::string meta_json = MetaJson(data, meta, views);
  size_t base64_bytes = 0;
  for (const DataPayload& payload : payloads) base64_bytes += (payload.size() + 2) / 3 * 4 + 256;
  std::string page;
  page.reserve(ProfilePageStyle().size() + ProfilePageScript().size() + ProfilePageBody().size() +
               meta_json.size() + base64_bytes + 4096);
  // No source but the page itself: no request can leave it.
  absl::StrAppend(&page,
                  "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                  "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<meta name=\"generator\" content=\"");
  AppendXmlText(meta.generator, &page);
  page.append("\">\n<title>");
  AppendXmlText(meta.subtitle.empty() ? meta.title : absl::StrCat(meta.title, ": ", meta.subtitle),
                &page);
  absl::StrAppend(&page, "</title>\n<style>\n", ProfilePageStyle(), "</style>\n</head>\n<body>\n",
                  ProfilePageBody(), "\n<script type=\"application/json\" id=\"profcpu-meta\">",
                  meta_json, "</script>\n");
  const auto start = std::chrono::steady_clock::now();
  for (DataPayload& payload : payloads) AppendDataElement(payload, &page);
  work->base64_s += SecondsSince(start);
  absl::StrAppend(&page, "<script>\n", ProfilePageScript(), "</script>\n</body></html>\n");
  return page;
}

}  // namespace profcpu::render
