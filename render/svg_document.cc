#include "render/svg_document.h"

#include "absl/strings/str_cat.h"
#include "render/flamegraph_script.h"
#include "render/number_format.h"
#include "render/palette.h"
#include "render/xml_text.h"

namespace profcpu::render {
namespace {

constexpr double kSearchButtonOffset = 100;  // from the right margin
constexpr double kCaseButtonOffset = 16;

absl::string_view TitleText(const FlameGraphOptions& options) {
  if (!options.title.empty()) return options.title;
  if (options.flamechart) return "Flame Chart";
  return options.inverted ? "Icicle Graph" : "Flame Graph";
}

// Prologue, root element, notes and background gradient.
void WriteOpening(double width, double height, const FlameGraphOptions& options,
                  std::string* out) {
  out->append(
      "<?xml version=\"1.0\" standalone=\"no\"?>\n"
      "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
      "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
      "<svg version=\"1.1\" width=\"");
  AppendShortest(width, out);
  out->append("\" height=\"");
  AppendShortest(height, out);
  out->append("\" viewBox=\"0 0 ");
  AppendShortest(width, out);
  out->push_back(' ');
  AppendShortest(height, out);
  out->append(
      "\" xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
      "<!-- Flame graph rendered by profcpu. Width is the share of the count, "
      "height the stack depth. Hover a frame for details, click to zoom, "
      "Ctrl-F to search. -->\n");
  if (!options.notes.empty()) {
    out->append("<!-- NOTES: ");
    AppendXmlCommentText(options.notes, out);
    out->append(" -->\n");
  }
  // Validated (ValidateFlameGraphOptions), so a bad value cannot get here.
  const Background background = options.bg_colors.empty()
                                    ? BackgroundFor(options.palette)
                                    : ParseBackground(options.bg_colors).value_or(
                                          BackgroundFor(options.palette));
  absl::StrAppend(out,
                  "<defs><linearGradient id=\"background\" x1=\"0\" x2=\"0\" y1=\"0\" y2=\"1\">"
                  "<stop stop-color=\"", background.top, "\" offset=\"5%\"/>"
                  "<stop stop-color=\"", background.bottom, "\" offset=\"95%\"/>"
                  "</linearGradient></defs>\n");
}

// Font and search colour were checked to hold no character that could leave
// a declaration (ValidateFlameGraphOptions).
void WriteStyle(const FlameGraphOptions& options, std::string* out) {
  out->append("<style type=\"text/css\">\n  text { font-family:");
  out->append(options.font_type);
  out->append("; font-size:");
  AppendShortest(options.font_size, out);
  out->append("px; fill:rgb(0,0,0); }\n  #title { text-anchor:middle; font-size:");
  AppendShortest(options.font_size + 5, out);
  out->append(
      "px; }\n"
      "  #subtitle { text-anchor:middle; fill:rgb(160,160,160); }\n"
      "  #search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
      "  #search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
      "  #unzoom { cursor:pointer; }\n"
      "  #frames > g:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
      "  #frames > g.match > rect { fill:");
  out->append(options.search_color);
  out->append(
      "; }\n"
      "  .hide { display:none; }\n"
      "  .parent { opacity:0.5; }\n"
      "</style>\n");
}

void WriteText(absl::string_view id, double x, double y, absl::string_view text,
               absl::string_view extra, std::string* out) {
  absl::StrAppend(out, "<text id=\"", id, "\" x=\"");
  AppendShortest(x, out);
  out->append("\" y=\"");
  AppendShortest(y, out);
  out->push_back('"');
  out->append(extra.data(), extra.size());
  out->push_back('>');
  AppendXmlText(text, out);
  out->append("</text>\n");
}

void WriteBackgroundAndTitles(double width, double height, const FlameGraphOptions& options,
                              std::string* out) {
  out->append("<rect x=\"0\" y=\"0\" width=\"");
  AppendShortest(width, out);
  out->append("\" height=\"");
  AppendShortest(height, out);
  out->append("\" fill=\"url(#background)\"/>\n");
  // Titles are centred on a whole pixel, as flamegraph.pl places them.
  const double centre = static_cast<int>(width / 2);
  WriteText("title", centre, options.font_size * 2, TitleText(options), "", out);
  if (!options.subtitle.empty()) {
    WriteText("subtitle", centre, options.font_size * 4, options.subtitle, "", out);
  }
}

}  // namespace

void WriteDocumentStart(const FlameGraphLayout& layout, const FlameGraphOptions& options,
                        absl::string_view count_name, std::string* out) {
  WriteOpening(layout.width, layout.height, options, out);
  WriteStyle(options, out);
  out->append("<script type=\"text/ecmascript\"><![CDATA[");
  const absl::string_view script = FlameGraphScript();
  out->append(script.data(), script.size());
  out->append("]]></script>\n");
  WriteBackgroundAndTitles(layout.width, layout.height, options, out);

  const double pad = FlameGraphLayout::kSidePad;
  const double top_line = options.font_size * 2;
  const double bottom_line = layout.height - layout.bottom_pad / 2;
  // The details and matched lines start as a space so the script always finds
  // a text node to replace.
  WriteText("details", pad, bottom_line, " ", "", out);
  WriteText("unzoom", pad, top_line, "Reset Zoom", " class=\"hide\"", out);
  WriteText("search", layout.width - pad - kSearchButtonOffset, top_line, "Search", "", out);
  WriteText("ignorecase", layout.width - pad - kCaseButtonOffset, top_line, "ic", "", out);
  WriteText("matched", layout.width - pad - kSearchButtonOffset, bottom_line, " ", "", out);

  out->append("<g id=\"frames\" data-xpad=\"");
  AppendShortest(pad, out);
  out->append("\" data-width=\"");
  AppendShortest(layout.drawable_width, out);
  out->append("\" data-font-size=\"");
  AppendShortest(options.font_size, out);
  out->append("\" data-font-width=\"");
  AppendShortest(options.font_width, out);
  out->append(layout.inverted ? "\" data-inverted=\"1" : "\" data-inverted=\"0");
  out->append("\" data-name-type=\"");
  AppendXmlText(options.name_type, out);
  out->append("\" data-count-name=\"");
  AppendXmlText(count_name, out);
  out->append("\">\n");
}

void WriteDocumentEnd(std::string* out) { out->append("</g>\n</svg>\n"); }

void WriteNoSamplesDocument(const FlameGraphOptions& options, absl::string_view count_name,
                            std::string* out) {
  const double width = options.width;
  const double height = options.font_size * 6;
  WriteOpening(width, height, options, out);
  WriteStyle(options, out);
  WriteBackgroundAndTitles(width, height, options, out);
  WriteText("details", static_cast<int>(width / 2), options.font_size * 4,
            absl::StrCat("No ", count_name), " style=\"text-anchor:middle\"", out);
  out->append("</svg>\n");
}

size_t DocumentStartSizeHint() { return FlameGraphScript().size() + 4096; }

}  // namespace profcpu::render
