#include "render/profile_page_writer.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
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

// One data element: the encoded data, deflated when that is smaller.
absl::Status AppendDataElement(const PageData& data, const std::string& id, std::string* page) {
  const std::string raw = EncodePageData(data);
  PROFCPU_ASSIGN_OR_RETURN(std::string compressed,
                           archive::Deflate(raw, archive::DeflateContainer::kZlib));
  const bool deflated = compressed.size() < raw.size();
  absl::StrAppend(page, "<script type=\"application/octet-stream\" id=\"", id,
                  "\" data-encoding=\"", deflated ? "deflate" : "none", "\" data-bytes=\"",
                  raw.size(), "\">");
  page->append(absl::Base64Escape(deflated ? compressed : raw));
  page->append("</script>\n");
  return absl::OkStatus();
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
                                              const std::vector<PageView>& views) {
  PROFCPU_RETURN_IF_ERROR(CheckViewKeys(views));
  std::string page;
  page.reserve(ProfilePageStyle().size() + ProfilePageScript().size() + ProfilePageBody().size() +
               data.samples.size() * 8 + 4096);
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
                  MetaJson(data, meta, views), "</script>\n");
  PROFCPU_RETURN_IF_ERROR(AppendDataElement(data, "profcpu-data", &page));
  for (const PageView& view : views) {
    PROFCPU_RETURN_IF_ERROR(AppendDataElement(view.data, DataElementId(view.key), &page));
  }
  absl::StrAppend(&page, "<script>\n", ProfilePageScript(), "</script>\n</body></html>\n");
  return page;
}

}  // namespace profcpu::render
